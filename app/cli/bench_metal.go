package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"easel/app"
	"easel/app/backend"
	"easel/app/diagnose"
	"easel/app/settings"
	"easel/engine/ml/cpu"
	"easel/engine/ml/metal"
	"easel/engine/qi21"
	"easel/engine/qi21/qi21metal"
	"easel/engine/quant"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// ditMetalReport is `easel bench dit-metal --json`.
type ditMetalReport struct {
	Device   string                  `json:"device"`
	Emulated bool                    `json:"emulated"`
	Timing   string                  `json:"timing"` // what the times are: GPU, or the emulator's CPU time
	Geometry string                  `json:"geometry"`
	Blocks   []*qi21metal.BlockBench `json:"blocks,omitempty"`
	// Variants is --variants: every kernel variant per op class and codec, with its parity.
	Variants []qi21metal.VariantBench `json:"variants,omitempty"`
	// PeakTFLOPS is the chip's published FP16 peak the fractions use (0: unknown or emulated).
	PeakTFLOPS float64 `json:"peak_tflop_per_s,omitempty"`
}

// benchDiTMetal times one block of the real geometry on the Mac's Metal device, or with
// --emulator on the Metal emulator (the CPU runs the kernels: its times say nothing about a GPU).
func benchDiTMetal(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench dit-metal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	emulator := fs.Bool("emulator", false, "run the Metal kernels on the CPU emulator (kernels/emu): CPU time, not a GPU figure")
	reps := fs.Int("reps", 1, "repetitions per measurement (the median is reported)")
	rows := fs.Int("rows", 64, "target rows")
	prefix := fs.Int("prefix", 64, "cached prefix rows")
	codecs := fs.String("codecs", "q4tp", "weight codecs to measure, comma-separated (q4tp, q8_2f)")
	variants := fs.Bool("variants", false, "time every kernel variant per op class (docs/METAL.md §7) with its parity against the baseline")
	tune := fs.Bool("tune", false, "tune the kernel variants for this Mac on the first codec's block (\"Tuning for this Mac…\"), replacing the cached choice for the geometry class of --rows and --prefix, which generation then uses for requests of that class")
	heads := fs.Int("heads", 0, "attention heads of 128 channels (default: the published model's 32; fewer for a quick look)")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if *reps < 1 || *rows < 1 || *prefix < 0 || *heads < 0 {
		fmt.Fprintln(stderr, "easel bench dit-metal: --reps and --rows must be at least 1, --prefix and --heads at least 0")
		return ExitUsage
	}
	var dev device.Device
	if *emulator {
		d, err := emu.NewDevice(emu.Options{})
		if errors.Is(err, emu.ErrNoCompiler) {
			fmt.Fprintf(stderr, "easel bench dit-metal: the Metal emulator needs clang: %v\n", err)
			return ExitFailure
		}
		if err != nil {
			fmt.Fprintf(stderr, "easel bench dit-metal: starting the Metal emulator: %v\n", err)
			return ExitFailure
		}
		dev = d
	} else {
		c, err := backend.Choose(settings.BackendMetal)
		if err != nil {
			fmt.Fprintf(stderr, "easel bench dit-metal: %v; or pass --emulator to run the Metal kernels on the CPU emulator (CPU time, not a GPU figure)\n", err)
			return ExitBackend
		}
		dev = c.Device
	}
	cfg := qi21.PublishedConfig()
	if *heads > 0 {
		cfg.Heads = *heads
	}
	rep := &ditMetalReport{Device: dev.Name(), Emulated: *emulator, Timing: "GPU time on " + dev.Name(),
		Geometry: fmt.Sprintf("hidden %d, %d heads × %d, MLP %d", cfg.Hidden(), cfg.Heads, cfg.HeadDim, cfg.MLPHidden())}
	if *emulator {
		rep.Timing = "emulator CPU time (kernels/emu runs the Metal kernels on this CPU), not GPU time"
	}
	for _, name := range strings.Split(*codecs, ",") {
		d, ok := quant.ParseDType(strings.TrimSpace(name))
		if !ok {
			fmt.Fprintf(stderr, "easel bench dit-metal: unknown codec %q (the Metal kernels read q4tp and q8_2f)\n", name)
			return ExitUsage
		}
		m, err := qi21.NewRandomBlockModel(cfg, d, cpu.New())
		if err != nil {
			fmt.Fprintf(stderr, "easel bench dit-metal: building a %v block: %v\n", d, err)
			return ExitFailure
		}
		if *tune {
			return tuneVariants(dev, m, *rows, *prefix, *reps, d, *asJSON, stdout, stderr)
		}
		if *variants {
			if !*emulator {
				rep.PeakTFLOPS = metal.PeakTFLOPS(dev.Name())
			}
			vs, err := qi21metal.BenchVariants(dev, m, *rows, *prefix, *reps, cpu.ProcessCPUTime, rep.PeakTFLOPS)
			if err != nil {
				fmt.Fprintf(stderr, "easel bench dit-metal: the %v variants: %v\n", d, err)
				return ExitFailure
			}
			rep.Variants = append(rep.Variants, vs...)
			continue
		}
		r, err := qi21metal.BenchBlock(dev, m, *rows, *prefix, *reps, cpu.ProcessCPUTime)
		if err != nil {
			fmt.Fprintf(stderr, "easel bench dit-metal: running the %v block: %v\n", d, err)
			return ExitFailure
		}
		rep.Blocks = append(rep.Blocks, r)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return ExitFailure
		}
		return ExitOK
	}
	fmt.Fprintf(stdout, "dit-metal: one Qwen-Image-2.1 block (%s), %d target rows against %d prefix rows, median of %d\n", rep.Geometry, *rows, *prefix, *reps)
	fmt.Fprintf(stdout, "device %s — %s\n", rep.Device, rep.Timing)
	if *variants {
		printVariants(stdout, rep, *emulator)
	}
	for _, r := range rep.Blocks {
		if *emulator {
			fmt.Fprintf(stdout, "%-6s %.0f ms emulator wall time, %.0f ms emulator CPU time per block (%.3g GFLOP); not a GPU figure\n",
				r.Codec, r.MedianMS, r.CPUMS, (r.GemmFlops+r.AttnFlops)/1e9)
			continue
		}
		rate := 0.0
		if r.DeviceMS > 0 {
			rate = (r.GemmFlops + r.AttnFlops) / (r.DeviceMS / 1e3) / 1e9
		}
		fmt.Fprintf(stdout, "%-6s %.2f ms GPU time per block (%.2f ms wall), %.0f GFLOP/s of GPU time (%.1f GFLOP)\n",
			r.Codec, r.DeviceMS, r.MedianMS, rate, (r.GemmFlops+r.AttnFlops)/1e9)
	}
	return ExitOK
}

// printVariants is --variants' table: per op class and codec, each variant's device time per
// block, its rate, its share of the chip's peak and its parity with the baseline.
func printVariants(w io.Writer, rep *ditMetalReport, emulated bool) {
	unit := "GPU ms"
	if emulated {
		unit = "emu ms"
	}
	fmt.Fprintf(w, "%-5s %-6s %-8s %10s %9s %6s  %-14s %s\n", "class", "codec", "variant", unit, "TFLOP/s", "peak", "parity", "rel. error / note")
	for _, v := range rep.Variants {
		if v.Skipped != "" {
			fmt.Fprintf(w, "%-5s %-6s %-8s %10s %9s %6s  %-14s %s\n", v.Class, v.Codec, v.Variant, "-", "-", "-", "skipped", v.Skipped)
			continue
		}
		peak := "-"
		if v.PeakFraction > 0 {
			peak = fmt.Sprintf("%.0f%%", 100*v.PeakFraction)
		}
		fmt.Fprintf(w, "%-5s %-6s %-8s %10.2f %9.3g %6s  %-14s %.2g\n", v.Class, v.Codec, v.Variant, v.DeviceMS, v.TFLOPS, peak, v.Parity, v.RelErr)
	}
	if emulated {
		fmt.Fprintln(w, "(emulator CPU time: says nothing about a GPU; the parity column is what the emulator proves)")
	}
}

// tuneVariants is --tune: the autotuner over the denoiser's declared variants on one block of
// the geometry, the choice cached under the app-support folder's tuning/ and printed as
// diagnostics show it. It always tunes, replacing a cached choice for the class: generation runs
// it for requests of the same geometry class (backend.TunedVariants), which it otherwise tunes by
// itself on first use.
func tuneVariants(dev device.Device, m *qi21.Model, rows, prefix, reps int, codec quant.DType, asJSON bool, stdout, stderr io.Writer) int {
	reg := &metal.Registry{}
	if err := qi21metal.DeclareVariants(reg, m, rows, prefix, reps); err != nil {
		fmt.Fprintf(stderr, "easel bench dit-metal --tune: %v\n", err)
		return ExitFailure
	}
	key := metal.TuneKey{Device: dev.Name(), OSBuild: diagnose.HostBuild(), AppVersion: app.Version, Build: metal.BuildID(),
		Geometry: qi21metal.TuneGeometry(m.Config, codec, rows, prefix)}
	progress := func(done, total int, class, variant string) {
		if variant == "" {
			fmt.Fprintf(stderr, "\rTuning for this Mac… done%s\n", strings.Repeat(" ", 40))
			return
		}
		fmt.Fprintf(stderr, "\rTuning for this Mac… %d of %d: %s %-10s", done+1, total, class, variant)
	}
	r, err := metal.Tune(context.Background(), dev, key, reg, os.Getenv, progress)
	if err != nil {
		fmt.Fprintf(stderr, "easel bench dit-metal --tune: %v\n", err)
		return ExitFailure
	}
	if dir := backend.TuningDir(); dir != "" {
		if err := (metal.TuneCache{Dir: dir}).Save(r); err != nil {
			fmt.Fprintf(stderr, "easel bench dit-metal --tune: %v (the choice is not remembered)\n", err)
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if enc.Encode(r) != nil {
			return ExitFailure
		}
		return ExitOK
	}
	fmt.Fprintln(stdout, r.Summary())
	return ExitOK
}
