package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"easel/app/backend"
	"easel/app/settings"
	"easel/app/textgen"
	"easel/engine/cmf"
	"easel/engine/imageio"
	"easel/engine/ml/cpu"
	"easel/engine/ml/metal"
	"easel/engine/qwen3vl"
	"easel/engine/qwen3vl/qwen3vlmetal"
)

// easel describe and easel expand: the model's text encoder writing a prompt (app/textgen).

func init() {
	register(&Command{
		Name:    "describe",
		Usage:   "--model M.cmf IMAGE [--question TEXT] [--json] [--backend B] [--max-tokens N] [--temperature T] [--seed S]",
		Summary: "write a prompt that describes an image, with the model's own text encoder",
		Run: func(args []string, stdout, stderr io.Writer) int {
			return runWriteText("describe", args, stdout, stderr)
		},
	})
	register(&Command{
		Name:    "expand",
		Usage:   `--model M.cmf "IDEA" [--json] [--backend B] [--max-tokens N] [--temperature T] [--seed S]`,
		Summary: "turn a short idea into a detailed prompt, with the model's own text encoder",
		Run:     func(args []string, stdout, stderr io.Writer) int { return runWriteText("expand", args, stdout, stderr) },
	})
}

const writeTextExits = `exit codes: 0 written, 2 bad command line (or an empty idea), 4 model missing, 5 not a usable
.cmf (or one converted before Easel could write text: convert it again), 6 the image is missing or
unreadable, 11 the backend cannot run here, 130 cancelled (Ctrl-C)`

// maxWriteTokens bounds --max-tokens: the key/value cache grows with it (4096 tokens: 1.2 GB at
// the published size) and a prompt never needs more.
const maxWriteTokens = 4096

// textFlags are the flags describe, expand and generate --expand/--check share.
type textFlags struct {
	backend     string
	maxTokens   int
	temperature float64
	seed        int64
}

func (t *textFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.backend, "backend", "", "where the model runs: auto, cpu, metal or emulator (default: the app's setting)")
	fs.IntVar(&t.maxTokens, "max-tokens", 0, "the most tokens to write (default 300; Check: 8 per element)")
	fs.Float64Var(&t.temperature, "temperature", qwen3vl.DefaultSampling.Temperature, "sampling temperature; 0 writes greedily (the most likely token each time)")
	fs.Int64Var(&t.seed, "seed", -1, "the sampling seed (the same seed repeats the text); default: a random one")
}

// options turns the flags into textgen options (a random seed when none was given).
func (t *textFlags) options() (textgen.Options, *failure) {
	s := qwen3vl.DefaultSampling
	s.Temperature = t.temperature
	if err := s.Check(); err != nil {
		return textgen.Options{}, fail(ExitUsage, "--temperature: %v", err)
	}
	if t.maxTokens < 0 || t.maxTokens > maxWriteTokens {
		return textgen.Options{}, fail(ExitUsage, "--max-tokens %d: give a count from 1 to %d, or leave it out (300)", t.maxTokens, maxWriteTokens)
	}
	seed := uint64(t.seed)
	if t.seed < 0 {
		seed = rand.Uint64() >> 33
	}
	return textgen.Options{MaxTokens: t.maxTokens, Sampling: s, Seed: seed}, nil
}

// parseInterleaved parses flags given before, between and after the positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// textReport is the final JSON object of describe and expand.
type textReport struct {
	Text            string             `json:"text"`
	Tokens          int                `json:"tokens"`
	TokensPerSecond float64            `json:"tokens_per_second"`
	Stopped         bool               `json:"stopped"`
	Seed            uint64             `json:"seed"`
	Backend         string             `json:"backend"`
	StageTimes      map[string]float64 `json:"stage_s"`
	Checks          []textgen.Verdict  `json:"checks,omitempty"`
}

func newTextReport(r *textgen.Result, seed uint64, backendName string, loading time.Duration) *textReport {
	stages := map[string]float64{"loading model": loading.Seconds()}
	for _, s := range r.Stages {
		stages[s.Name] = s.Time.Seconds()
	}
	return &textReport{Text: r.Text, Tokens: r.Tokens, TokensPerSecond: r.TokensPerSecond, Stopped: r.Stopped, Seed: seed, Backend: backendName, StageTimes: stages}
}

func runWriteText(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "the .cmf model file (required)")
	asJSON := fs.Bool("json", false, "print one JSON object at the end (text, tokens, tokens_per_second, stage_s, seed) instead of streaming the text")
	question := ""
	if cmd == "describe" {
		fs.StringVar(&question, "question", "", "what to ask about the image (default: describe it as a prompt for an image model)")
	}
	var tf textFlags
	tf.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: easel %s %s\n\n", cmd, commands[cmd].Usage)
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\n%s\n", writeTextExits)
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "easel %s: %s\n", cmd, fmt.Sprintf(format, a...))
		return ExitUsage
	}
	switch {
	case *model == "":
		return usage("give the model file with --model M.cmf")
	case len(pos) != 1 && cmd == "describe":
		return usage("give one image file to describe (got %d arguments)", len(pos))
	case len(pos) != 1:
		return usage(`give the idea as one argument, in quotes: easel expand --model M.cmf "a cat on a windowsill" (got %d arguments)`, len(pos))
	case cmd == "expand" && strings.TrimSpace(pos[0]) == "":
		return usage("%v", textgen.ErrEmptyIdea)
	}
	opts, f := tf.options()
	if f != nil {
		fmt.Fprintf(stderr, "easel %s: %v\n", cmd, f.err)
		return f.code
	}
	ctx, stop := interruptContext()
	defer stop()
	report, f := writeText(ctx, cmd, *model, pos[0], question, tf.backend, opts, !*asJSON, stdout, stderr)
	if f != nil {
		if ctx.Err() != nil {
			f = fail(ExitCancelled, "cancelled; nothing was written")
		}
		fmt.Fprintf(stderr, "easel %s: %v\n", cmd, f.err)
		return f.code
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.Encode(report)
		return ExitOK
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stderr, "%d tokens, %.1f tokens/s on %s, seed %d\n", report.Tokens, report.TokensPerSecond, report.Backend, report.Seed)
	return ExitOK
}

// writeText runs describe (arg: the image path) or expand (arg: the idea); with stream, the text
// goes to stdout as it is written.
func writeText(ctx context.Context, cmd, modelPath, arg, question, backendFlag string, opts textgen.Options, stream bool, stdout, stderr io.Writer) (*textReport, *failure) {
	start := time.Now()
	var img *image.NRGBA
	if cmd == "describe" {
		// The image first: a bad file fails before the model loads.
		var err error
		if img, err = imageio.Load(arg); err != nil {
			return nil, &failure{ExitImage, err}
		}
	}
	w, name, closeFn, f := openTextWriter(modelPath, backendFlag, stderr)
	if f != nil {
		return nil, f
	}
	defer closeFn()
	loading := time.Since(start)
	if stream {
		opts.OnText = func(p string) { io.WriteString(stdout, p) }
	}
	var r *textgen.Result
	var err error
	if cmd == "describe" {
		r, err = w.Describe(ctx, img, question, opts)
	} else {
		r, err = w.Expand(ctx, arg, opts)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fail(ExitCancelled, "cancelled; nothing was written")
		}
		if errors.Is(err, textgen.ErrBadImage) {
			return nil, &failure{ExitImage, fmt.Errorf("%s: %w", arg, err)}
		}
		return nil, &failure{ExitFailure, err}
	}
	return newTextReport(r, opts.Seed, name(), loading), nil
}

// openTextWriter opens the model and the decoder where --backend (or the app's setting) says: on
// a Metal device (or the emulator) with the CPU as fallback when it declines, said on stderr.
func openTextWriter(modelPath, backendFlag string, stderr io.Writer) (*textgen.Writer, func() string, func(), *failure) {
	m, f := openModel(modelPath)
	if f != nil {
		return nil, nil, nil, f
	}
	want := settings.Backend(backendFlag)
	if backendFlag == "" {
		want = settings.BackendAuto
		if st, err := settings.DefaultStore(); err == nil {
			if s, err := st.Load(); err == nil {
				want = s.Backend
			}
		}
	}
	choice, err := backend.Choose(want)
	if err != nil {
		m.Close()
		return nil, nil, nil, fail(ExitBackend, "--backend %s: %v", want, err)
	}
	cpuEnc, err := qwen3vl.NewEncoder(cpu.New(), m)
	if err != nil {
		m.Close()
		return nil, nil, nil, &failure{ExitModelInvalid, err}
	}
	var gen textgen.Generator = cpuEnc
	name, closeFn := func() string { return "cpu" }, func() { m.Close() }
	if choice.Metal() {
		gen, name, closeFn = deviceGenerator(choice, m, cpuEnc, stderr)
	}
	w, err := textgen.New(m, gen)
	if err != nil {
		closeFn()
		if errors.Is(err, textgen.ErrNoHead) {
			return nil, nil, nil, &failure{ExitModelInvalid, fmt.Errorf("%s: %s", modelPath, strings.TrimPrefix(err.Error(), textgen.ErrNoHead.Error()+": "))}
		}
		return nil, nil, nil, &failure{ExitModelInvalid, err}
	}
	return w, name, closeFn, nil
}

// deviceGenerator is the text encoder on the chosen device with the CPU encoder behind it; a
// device that declines (now or at a run) leaves the work to the CPU and says so.
func deviceGenerator(choice *backend.Choice, m *cmf.File, cpuEnc *qwen3vl.Encoder, stderr io.Writer) (textgen.Generator, func() string, func()) {
	name := choice.Name()
	notice := func(d *metal.Declined) {
		fmt.Fprintf(stderr, "easel: %v; writing on the CPU instead\n", d)
		name = "cpu" // the report says where the text was written
	}
	gpu, err := qwen3vlmetal.New(choice.Device, m, m.Bytes())
	var d *metal.Declined
	if errors.As(err, &d) {
		notice(d)
		return cpuEnc, func() string { return "cpu" }, func() { m.Close() }
	}
	if err != nil {
		fmt.Fprintf(stderr, "easel: the text encoder cannot load on %s (%v); writing on the CPU instead\n", choice.Device.Name(), err)
		return cpuEnc, func() string { return "cpu" }, func() { m.Close() }
	}
	r, _ := qwen3vlmetal.NewRunner(gpu, cpuEnc, notice)
	return r, func() string { return name }, func() { r.Close(); m.Close() }
}
