package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"easel/app"
	"easel/app/backend"
	"easel/app/diagnose"
	"easel/app/settings"
	"easel/engine/ml/metal"
	"easel/engine/ml/metalops"
	"easel/engine/pipeline"
	"easel/kernels/device"
	"easel/kernels/emu"
)

func init() {
	register(&Command{
		Name:  "diagnose",
		Usage: "[--json] [--emulator] [--model M.cmf] [--rerun]",
		Summary: "a report to paste into an issue: the machine, the GPU, the self-test per kernel, the guards, " +
			"the last job's times, declines and retries (nothing personal)",
		Run: runDiagnose,
	})
}

// runDiagnose prints the diagnostics report. On a Mac (or with --emulator) it runs the first-use
// self-test of the kernels when no cached result exists for the device, OS build, app version and
// model file, and caches it in the app-support folder's selftest/.
func runDiagnose(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diagnose", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	emulator := fs.Bool("emulator", false, "run the self-test on the Metal emulator (kernels/emu) instead of the Mac's GPU")
	model := fs.String("model", "", "the model file the self-test is keyed by (its name, size and date; the folder is not reported)")
	rerun := fs.Bool("rerun", false, "run the self-test again even when a cached result exists")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "easel diagnose: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	dir, dirErr := settings.Dir()
	if dirErr != nil {
		dir = ""
	}
	opts := diagnose.Options{Guards: metal.DefaultGuards, Dir: dir}
	if k, err := metal.KnobsFromEnv(); err == nil {
		opts.Guards = k.Guards
	}
	choice, err := backend.Choose(settings.BackendAuto)
	if err != nil {
		fmt.Fprintf(stderr, "easel diagnose: %v\n", err)
		return ExitFailure
	}
	opts.Backend = choice.Reason
	switch {
	case *emulator:
		dev, err := emu.NewDevice(emu.Options{})
		if err != nil {
			if errors.Is(err, emu.ErrNoCompiler) {
				fmt.Fprintf(stderr, "easel diagnose: --emulator: %v\n", err)
				return ExitFailure
			}
			fmt.Fprintf(stderr, "easel diagnose: --emulator: %v\n", err)
			return ExitFailure
		}
		opts.Device, opts.Emulated = dev, true
		opts.Backend += "; the self-test below ran on the Metal emulator, as --emulator asks"
	case choice.Metal():
		opts.Device = choice.Device
	default:
		_, why, _ := strings.Cut(choice.Reason, " because ")
		opts.Why = why
	}
	if opts.Device != nil {
		r, cached, err := selfTest(context.Background(), opts.Device, *model, dir, *rerun, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "easel diagnose: the self-test: %v\n", err)
			return ExitFailure
		}
		opts.SelfTest, opts.SelfTestCached = r, cached
	}
	rep := diagnose.Build(opts)
	if *asJSON {
		stdout.Write(rep.JSON())
	} else {
		io.WriteString(stdout, rep.Text())
	}
	return ExitOK
}

// selfTest loads the cached self-test for dev and the model file, or runs it with a progress line
// on stderr and caches it under dir/selftest.
func selfTest(ctx context.Context, dev device.Device, model, dir string, rerun bool, stderr io.Writer) (*metal.SelfTestReport, bool, error) {
	key := metal.SelfTestKey{Device: dev.Name(), OSBuild: diagnoseHostBuild(), AppVersion: app.Version, Build: metal.BuildID()}
	if model != "" {
		var err error
		if key, err = key.ModelKey(model); err != nil {
			return nil, false, err
		}
	}
	checks, done := metalops.SelfTestChecks()
	defer done()
	cache := metal.SelfTestCache{}
	if dir != "" {
		cache.Dir = filepath.Join(dir, "selftest")
	}
	progress := func(n, total int, kernel string) {
		if kernel == "" {
			fmt.Fprintf(stderr, "\rself-test: %d of %d kernels checked%s\n", n, total, strings.Repeat(" ", 40))
			return
		}
		fmt.Fprintf(stderr, "\rself-test: %d of %d: %-50s", n+1, total, kernel)
	}
	if rerun || cache.Dir == "" {
		r, err := metal.RunSelfTest(ctx, dev, key, checks, progress)
		if err == nil && cache.Dir != "" {
			_ = cache.Save(r)
		}
		return r, false, err
	}
	return cache.LoadOrRun(ctx, dev, key, checks, progress)
}

// diagnoseHostBuild is the OS build the self-test is keyed by.
func diagnoseHostBuild() string { return diagnose.HostBuild() }

// recordLastJob keeps the finished job's times, peak memory per stage and notices for `easel
// diagnose` (in the app-support folder; nothing personal: the model file's base name only).
func recordLastJob(res *pipeline.Result, backendName, model string, notices []string) {
	dir, err := settings.Dir()
	if err != nil {
		return
	}
	diagnose.RecordLastJob(dir, res, backendName, model, notices)
}

// tuneProgress is easel generate's line while the kernels are tuned for this Mac (once per
// device, OS build, app version and geometry class, after the self-test): a line per variant with
// --verbose or on a terminal.
func (o *generateOutput) tuneProgress(done, total int, class, variant string) {
	if o.json || (o.terminal == nil && !o.verbose) {
		return
	}
	o.endProgress()
	if variant == "" {
		fmt.Fprintf(o.stderr, "easel generate: tuned %d kernel variants for this Mac (once for this Mac, macOS build and image size)\n", total)
		return
	}
	fmt.Fprintf(o.stderr, "easel generate: %s\n", backend.TuneProgressText(done, total, class, variant))
}

// selfTestProgress is easel generate's line while the first-use self-test runs (once per device,
// OS build, app version and model file): a line per check with --verbose or on a terminal.
func (o *generateOutput) selfTestProgress(done, total int, kernel string) {
	if o.json || (o.terminal == nil && !o.verbose) {
		return
	}
	if kernel == "" {
		fmt.Fprintf(o.stderr, "easel generate: the GPU self-test checked %d kernels (once for this Mac, macOS build and model)\n", total)
		return
	}
	fmt.Fprintf(o.stderr, "easel generate: GPU self-test %d of %d: %s\n", done+1, total, kernel)
}
