package cli

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"easel/app"
	"easel/app/backend"
	"easel/app/imagefile"
	"easel/app/loralib"
	"easel/app/settings"
	"easel/engine/cmf"
	"easel/engine/imageio"
	"easel/engine/ml"
	"easel/engine/ml/cpu"
	"easel/engine/mmapfile"
	"easel/engine/pipeline"
)

func init() {
	register(&Command{
		Name:    "generate",
		Usage:   "--model M.cmf --prompt TEXT [flags]",
		Summary: "make an image from a prompt and condition images",
		Run:     runGenerate,
	})
}

// Exit codes of easel generate beyond the shared ones: one per kind of bad input.
const (
	ExitModelMissing = 4   // the model file does not exist or cannot be read
	ExitModelInvalid = 5   // the file is not a .cmf, is damaged, or is not a Qwen-Image-2.1 model
	ExitImage        = 6   // a condition image is missing, unreadable, oversized, or there are too many
	ExitSize         = 7   // the size or aspect ratio is impossible
	ExitSettings     = 8   // steps, CFG scale or seed are impossible
	ExitWrite        = 9   // the image cannot be saved (full disk, unwritable or missing folder)
	ExitMemory       = 10  // the request's cache and activations exceed the machine's memory
	ExitBackend      = 11  // the backend asked for cannot run on this machine (metal off Apple silicon)
	ExitLoRA         = 12  // a LoRA file is missing, unreadable, or made for another model
	ExitModelChanged = 13  // the model file changed or became unreadable during the run (drive unplugged, file truncated or replaced)
	ExitCancelled    = 130 // Ctrl-C (128 + SIGINT, as shells report it)
)

const generateUsage = `usage: easel generate --model M.cmf --prompt TEXT [flags]

  --model M.cmf       the model file (easel convert makes one from a Hugging Face snapshot)
  --prompt TEXT       what to draw (may be empty)
  --negative TEXT     what to steer away from; used when --cfg is above 1
  --image FILE        a condition image (PNG, JPEG, WebP, GIF, BMP, TIFF); repeat for up to 10, in order
  --size WxH          output size in pixels, each side floored to a multiple of 32
  --aspect W:H        output shape at about the model's output resolution² pixels (e.g. 16:9)
  --resolution N      output resolution (default: the model's, 1024); sizes from --aspect or
                      the last condition image hold about N² pixels
  --steps N           denoising steps (default: the model's, 40)
  --cfg S             true-CFG scale (default: the model's, 1 = off)
  --seed N            the noise seed (default: a random one, written into the image)
  --out FILE.png      where to save (default: easel-SEED.png); never left half-written
  --backend B         where the networks run: auto (Metal on a Mac with Apple silicon, else the
                      CPU), metal (fail where Metal cannot run), cpu, or emulator (the whole
                      Metal path on the CPU emulator: slow; EASEL_EMU_FAULT injects GPU faults)
                      (default: the app's backend setting, auto without one)
  --lora FILE[:S]     apply a LoRA (.safetensors) at strength S (default 1; 0 = off, negative
                      inverts it); repeat for several, applied together
  --lora-preset       use the sampling preset of the first LoRA that has one (its steps, CFG and
                      schedule, e.g. 8 steps on the Turbo grid) for what is not given
  --json              print one JSON event per line on stdout instead of a progress line
  --verbose           say on stderr which backend runs the denoiser and why
  --from IMAGE.png    make an image Easel saved again: its prompt, negative prompt, size, steps,
                      CFG, seed, condition images and LoRAs (found beside it or, for LoRAs, in
                      the LoRA folder; checked by SHA-256); flags given as well override them

exit codes: 0 saved, 2 bad command line, 4 model missing, 5 not a usable .cmf, 6 bad condition
image, 7 impossible size, 8 impossible steps/CFG/seed, 9 cannot save, 10 too large for this
machine's memory, 11 the backend cannot run here (metal off Apple silicon), 12 a LoRA is missing,
unreadable or for another model, 13 the model file changed or became unreadable during the run
(drive unplugged, file truncated or replaced), 130 cancelled (Ctrl-C)`

// interruptContext is cancelled by Ctrl-C or SIGTERM (a test substitutes its own).
var interruptContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// adjustPipeline changes the pipeline's options before it is built (a test wraps the denoiser).
var adjustPipeline = func(o pipeline.Options) pipeline.Options { return o }

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ", ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// generateArgs is the parsed command line.
type generateArgs struct {
	model, prompt, negative, size, aspect, seed, out string
	backend                                          string          // --backend; "" takes the settings'
	from                                             string          // --from: a PNG whose settings to reuse
	fromModelHash                                    string          // the model fingerprint it records
	set                                              map[string]bool // the flags given explicitly
	images                                           stringList
	loras                                            stringList // --lora FILE[:STRENGTH]
	resolution, steps                                int
	cfg                                              float64
	json, verbose, loraPreset                        bool
}

func parseGenerateArgs(args []string) (*generateArgs, error) {
	g := &generateArgs{}
	f := flag.NewFlagSet("generate", flag.ContinueOnError)
	f.SetOutput(io.Discard)
	f.StringVar(&g.model, "model", "", "")
	f.StringVar(&g.prompt, "prompt", "", "")
	f.StringVar(&g.negative, "negative", "", "")
	f.Var(&g.images, "image", "")
	f.Var(&g.loras, "lora", "")
	f.BoolVar(&g.loraPreset, "lora-preset", false, "")
	f.StringVar(&g.size, "size", "", "")
	f.StringVar(&g.aspect, "aspect", "", "")
	f.IntVar(&g.resolution, "resolution", 0, "")
	f.IntVar(&g.steps, "steps", 0, "")
	f.Float64Var(&g.cfg, "cfg", 0, "")
	f.StringVar(&g.seed, "seed", "", "")
	f.StringVar(&g.out, "out", "", "")
	f.BoolVar(&g.json, "json", false, "")
	f.BoolVar(&g.verbose, "verbose", false, "")
	f.StringVar(&g.backend, "backend", "", "")
	f.StringVar(&g.from, "from", "", "")
	if err := f.Parse(args); err != nil {
		return nil, err
	}
	g.set = map[string]bool{}
	f.Visit(func(fl *flag.Flag) { g.set[fl.Name] = true })
	if f.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (quote a prompt with spaces)", f.Arg(0))
	}
	if g.model == "" {
		return nil, errors.New("--model is required")
	}
	return g, nil
}

// failure is an error with the exit code it maps to.
type failure struct {
	code int
	err  error
}

func fail(code int, format string, a ...any) *failure {
	return &failure{code, fmt.Errorf(format, a...)}
}

func runGenerate(args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprintln(stdout, generateUsage)
			return ExitOK
		}
	}
	g, err := parseGenerateArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "easel generate: %v\n\n%s\n", err, generateUsage)
		return ExitUsage
	}
	out := newGenerateOutput(g.json, stdout, stderr)
	out.verbose = g.verbose
	saved, f := generate(g, out)
	if f != nil {
		out.failed(f)
		return f.code
	}
	out.saved(saved)
	return ExitOK
}

// savedImage is what generate reports on success.
type savedImage struct {
	Path          string             `json:"path"`
	Width, Height int                `json:"-"`
	Seed          uint64             `json:"seed"`
	Elapsed       time.Duration      `json:"-"`
	StageTimes    map[string]float64 `json:"stage_s"`
	// StageDeviceTimes is each stage's Metal GPU time (empty on the CPU backend).
	StageDeviceTimes map[string]float64 `json:"stage_device_s,omitempty"`
}

// generate does the work of easel generate.
func generate(g *generateArgs, out *generateOutput) (*savedImage, *failure) {
	if g.from != "" {
		if f := applyFrom(g, out); f != nil {
			return nil, f
		}
	}
	req := pipeline.Request{Prompt: g.prompt, NegativePrompt: g.negative, Steps: g.steps, CFG: g.cfg, Resolution: g.resolution}
	if g.steps < 0 {
		return nil, fail(ExitSettings, "--steps %d: choose at least 2", g.steps)
	}
	if g.cfg < 0 {
		return nil, fail(ExitSettings, "--cfg %g: choose 1 (off) or more", g.cfg)
	}
	if g.resolution < 0 {
		return nil, fail(ExitSize, "--resolution %d: choose a positive number of pixels", g.resolution)
	}
	if g.size != "" && g.aspect != "" {
		return nil, fail(ExitSize, "--size and --aspect both given: choose one")
	}
	if g.size != "" {
		w, h, err := parseSize(g.size)
		if err != nil {
			return nil, &failure{ExitSize, err}
		}
		req.Width, req.Height = w, h
	}
	if g.aspect != "" {
		a, err := pipeline.ParseAspect(g.aspect)
		if err != nil {
			return nil, &failure{ExitSize, err}
		}
		req.Aspect = a
	}
	if g.seed != "" {
		s, err := strconv.ParseUint(g.seed, 10, 64)
		if err != nil {
			return nil, fail(ExitSettings, "--seed %q: give a whole number from 0 to %d", g.seed, uint64(1<<64-1))
		}
		req.Seed = s
	} else {
		var b [4]byte
		rand.Read(b[:])
		req.Seed = uint64(binary.LittleEndian.Uint32(b[:]))
	}
	if len(g.images) > pipeline.MaxImages {
		return nil, fail(ExitImage, "%d condition images: the model takes at most %d", len(g.images), pipeline.MaxImages)
	}
	var refs []imagefile.ImageRef
	for _, path := range g.images {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fail(ExitImage, "condition image %s cannot be read: %v", path, err)
		}
		img, err := imageio.Decode(data, path)
		if err != nil {
			return nil, &failure{ExitImage, err}
		}
		sum := sha256.Sum256(data)
		refs = append(refs, imagefile.ImageRef{Name: filepath.Base(path), SHA256: hex.EncodeToString(sum[:])})
		req.Images = append(req.Images, img)
	}
	outPath := g.out
	if outPath == "" {
		outPath = fmt.Sprintf("easel-%d.png", req.Seed)
	}
	if f := checkWritable(outPath); f != nil {
		return nil, f
	}

	choice, f := chooseBackend(g.backend, out)
	if f != nil {
		return nil, f
	}
	out.backendChosen(choice)

	loadStart := time.Now()
	model, f := openModel(g.model)
	if f != nil {
		return nil, f
	}
	defer model.Close()
	if g.fromModelHash != "" && g.fromModelHash != modelFingerprint(model) {
		fmt.Fprintf(out.stderr, "easel generate: note: %s was made with another model file (fingerprint %.10s, this one %.10s), so the image will differ\n",
			g.from, g.fromModelHash, modelFingerprint(model))
	}
	be := cpu.New()
	p, err := newPipeline(model, be, adjustPipeline(choice.Options(model)))
	if changed := (*mmapfile.FaultError)(nil); errors.As(err, &changed) {
		return nil, fail(ExitModelChanged, "%v; %s was not written", err, outPath)
	}
	if err != nil {
		return nil, fail(ExitModelInvalid, "%s cannot be used: %v", g.model, err)
	}
	defer p.Close()
	backendName := be.Name()
	if dev := p.DenoiserDevice(); dev != "" {
		backendName = "metal (" + dev + ") + " + backendName
	}
	if _, _, err := p.OutputSize(&req); err != nil {
		return nil, &failure{ExitSize, err}
	}
	applied, f := loadLoRAs(g.loras, p, out)
	if f != nil {
		return nil, f
	}
	req.LoRAs = loralib.ForModel(applied)
	if pr := loralib.FirstPreset(applied); pr != nil {
		if g.loraPreset {
			steps, cfg, sigmas, scheduler := loralib.PresetSettings(pr, p.SchedulerConfig())
			if !g.set["steps"] {
				req.Steps, req.Sigmas, req.Scheduler = steps, sigmas, scheduler
			}
			if !g.set["cfg"] {
				req.CFG = cfg
			}
		} else {
			fmt.Fprintf(out.stderr, "easel generate: note: a LoRA suggests %s; add --lora-preset to use it\n", pr.Describe())
		}
	}

	loaded := time.Since(loadStart)

	ctx, stop := interruptContext()
	defer stop()
	events := make(chan pipeline.Event)
	drained := make(chan struct{})
	var notices []string
	go func() {
		for ev := range events {
			if ev.Notice != "" {
				notices = append(notices, ev.Notice)
			}
			out.progress(ev)
		}
		close(drained)
	}()
	res, err := p.Run(ctx, req, events)
	<-drained
	out.endProgress()
	if err != nil {
		var changed *mmapfile.FaultError
		switch {
		case errors.As(err, &changed):
			return nil, fail(ExitModelChanged, "%v; %s was not written", err, outPath)
		case errors.Is(err, context.Canceled):
			return nil, fail(ExitCancelled, "cancelled; %s was not written", outPath)
		case errors.Is(err, pipeline.ErrSize):
			return nil, &failure{ExitSize, err}
		case errors.Is(err, pipeline.ErrImages):
			return nil, &failure{ExitImage, err}
		case errors.Is(err, pipeline.ErrSettings), errors.Is(err, pipeline.ErrNoise):
			return nil, &failure{ExitSettings, err}
		case errors.Is(err, pipeline.ErrMemory):
			return nil, &failure{ExitMemory, err}
		}
		return nil, &failure{ExitFailure, err}
	}
	settings := &imagefile.Settings{
		Prompt: req.Prompt, NegativePrompt: negativeUsed(req.NegativePrompt, res.CFG),
		Width: res.Width, Height: res.Height, Steps: res.Steps, CFG: res.CFG, Seed: res.Seed,
		Sigmas: res.Sigmas, Resolution: res.Resolution, Sampler: "Euler",
		Model: filepath.Base(g.model), ModelHash: modelFingerprint(model), Images: refs, LoRAs: loralib.Refs(applied),
		EaselVersion: app.Version, Backend: backendName,
	}
	saveStart := time.Now()
	if err := imagefile.WriteFile(outPath, res.Image, settings); err != nil {
		return nil, &failure{ExitWrite, err}
	}
	recordLastJob(res, backendName, notices, choice.Metal())
	stages := map[string]float64{"loading model": loaded.Seconds(), "saving": time.Since(saveStart).Seconds()}
	for s, d := range res.StageTimes {
		if d > 0 {
			stages[pipeline.Stage(s).String()] = d.Seconds()
		}
	}
	var device map[string]float64
	for s, d := range res.StageDeviceTimes {
		if d > 0 {
			if device == nil {
				device = map[string]float64{}
			}
			device[pipeline.Stage(s).String()] = d.Seconds()
		}
	}
	return &savedImage{Path: outPath, Width: res.Width, Height: res.Height, Seed: res.Seed, Elapsed: time.Since(loadStart), StageTimes: stages, StageDeviceTimes: device}, nil
}

// newPipeline is pipeline.New with a fault reading the model file's mapping (the tokenizer, the
// configs) returned as its *mmapfile.FaultError rather than ending the process.
func newPipeline(m *cmf.File, be ml.Backend, opts pipeline.Options) (_ *pipeline.Pipeline, err error) {
	defer mmapfile.Recover(&err)
	defer mmapfile.Guard()()
	return pipeline.New(m, be, opts)
}

// negativeUsed is the negative prompt as the image records it: only when CFG used it.
func negativeUsed(neg string, cfg float64) string {
	if cfg > 1 {
		return neg
	}
	return ""
}

// parseSize reads "WxH" (or "W×H", "W,H").
func parseSize(s string) (int, int, error) {
	for _, sep := range []string{"x", "X", "×", ","} {
		if a, b, ok := strings.Cut(s, sep); ok {
			w, err1 := strconv.Atoi(strings.TrimSpace(a))
			h, err2 := strconv.Atoi(strings.TrimSpace(b))
			if err1 == nil && err2 == nil && w > 0 && h > 0 {
				return w, h, nil
			}
			break
		}
	}
	return 0, 0, fmt.Errorf("--size %q: write it as WIDTHxHEIGHT in pixels, like 1024x768", s)
}

// checkWritable fails early, before minutes of work, when the output cannot be saved.
func checkWritable(path string) *failure {
	if strings.ToLower(filepath.Ext(path)) != ".png" {
		return fail(ExitUsage, "--out %s: Easel saves PNG files; end the name with .png", path)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fail(ExitWrite, "--out %s is a folder: give a file name ending in .png", path)
	}
	probe, err := os.CreateTemp(filepath.Dir(path), ".easel-write-check-*")
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fail(ExitWrite, "cannot save %s: the folder %s does not exist; create it or choose another", path, filepath.Dir(path))
		case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
			return fail(ExitWrite, "cannot save %s: Easel may not write to the folder %s; choose another folder", path, filepath.Dir(path))
		case errors.Is(err, syscall.ENOSPC):
			return fail(ExitWrite, "cannot save %s: the disk is full; free some space or choose another folder", path)
		}
		return fail(ExitWrite, "cannot save %s: %v", path, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// openModel opens the model file and sorts its failures into "missing" and "not usable".
func openModel(path string) (*cmf.File, *failure) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fail(ExitModelMissing, "model file %s does not exist: give the path of a .cmf (easel convert makes one from a Hugging Face snapshot)", path)
	case err != nil:
		return nil, fail(ExitModelMissing, "model file %s cannot be read: %v", path, err)
	case st.IsDir():
		if _, err := os.Stat(filepath.Join(path, "model_index.json")); err == nil {
			return nil, fail(ExitModelInvalid, "%s is a Hugging Face snapshot folder, not a .cmf: convert it first with `easel convert %s OUT.cmf`", path, path)
		}
		return nil, fail(ExitModelInvalid, "%s is a folder, not a .cmf model file", path)
	}
	f, err := cmf.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, fail(ExitModelMissing, "model file %s cannot be read: %v", path, err)
		}
		return nil, &failure{ExitModelInvalid, err}
	}
	return f, nil
}

// modelFingerprint identifies a model file's content without reading its weights: the SHA-256
// of its header JSON and of every tensor record (name, codec, shape, size and the payload's
// hash64 the file stores).
func modelFingerprint(f *cmf.File) string {
	h := sha256.New()
	h.Write(f.HeaderJSON())
	for _, e := range f.Entries() {
		fmt.Fprintf(h, "\x00%s\x00%d\x00%v\x00%d\x00%016x", e.Name, e.DType, e.Shape, e.Size, e.Hash)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// generateOutput prints progress (a terminal line, JSON lines, or nothing) and the outcome.
type generateOutput struct {
	json, verbose  bool
	stdout, stderr io.Writer
	terminal       *os.File // stderr when it is a terminal
	enc            *json.Encoder
}

func newGenerateOutput(asJSON bool, stdout, stderr io.Writer) *generateOutput {
	o := &generateOutput{json: asJSON, stdout: stdout, stderr: stderr, enc: json.NewEncoder(stdout)}
	o.enc.SetEscapeHTML(false)
	if f, ok := stderr.(*os.File); ok && !asJSON {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			o.terminal = f
		}
	}
	return o
}

// jsonEvent is one --json line.
type jsonEvent struct {
	Stage          string                   `json:"stage"`
	Step           int                      `json:"step,omitempty"`
	Steps          int                      `json:"steps,omitempty"`
	Sigma          float32                  `json:"sigma,omitempty"`
	Elapsed        float64                  `json:"elapsed_s"`
	SecondsPerStep float64                  `json:"s_per_step,omitempty"`
	LastStep       float64                  `json:"last_step_s,omitempty"`
	ETA            float64                  `json:"eta_s,omitempty"`
	Timings        map[string]jsonClassTime `json:"timings,omitempty"`
	DeviceSeconds  float64                  `json:"device_s,omitempty"`
	Memory         *jsonMemory              `json:"memory,omitempty"`
	Path           string                   `json:"path,omitempty"`
	Seed           *uint64                  `json:"seed,omitempty"`
	StageTimes     map[string]float64       `json:"stage_s,omitempty"`
	StageDevice    map[string]float64       `json:"stage_device_s,omitempty"`
	Backend        string                   `json:"backend,omitempty"`
	Notice         string                   `json:"notice,omitempty"`
	Error          string                   `json:"error,omitempty"`
	ExitCode       int                      `json:"exit_code,omitempty"`
}

type jsonClassTime struct {
	Seconds float64 `json:"s"`
	Ops     int     `json:"ops"`
}

type jsonMemory struct {
	Weights      map[string]int64 `json:"weights_bytes"`
	PrefixKV     []int64          `json:"prefix_kv_bytes,omitempty"`
	Activations  int64            `json:"activations_estimate_bytes,omitempty"`
	PeakRSS      int64            `json:"peak_rss_bytes,omitempty"`
	GoHeap       int64            `json:"go_heap_bytes"`
	DeviceBudget int64            `json:"device_budget_bytes,omitempty"`
}

func (o *generateOutput) progress(ev pipeline.Event) {
	if ev.Notice != "" {
		o.notice(ev)
		return
	}
	switch {
	case o.json:
		je := jsonEvent{Stage: ev.Stage.String(), Step: ev.Step, Steps: ev.Steps, Sigma: ev.Sigma, Elapsed: ev.Elapsed.Seconds(),
			SecondsPerStep: ev.StepTime.Seconds(), LastStep: ev.LastStepTime.Seconds(), ETA: ev.ETA.Seconds(), Timings: map[string]jsonClassTime{},
			DeviceSeconds: ev.DeviceTime.Seconds()}
		for c, t := range ev.Timings {
			if t.Ops > 0 {
				je.Timings[ml.Class(c).String()] = jsonClassTime{t.Time.Seconds(), t.Ops}
			}
		}
		m := ev.Memory
		jm := &jsonMemory{Weights: map[string]int64{}, PrefixKV: m.PrefixKV, Activations: m.Activations, PeakRSS: m.PeakRSS, GoHeap: m.GoHeap, DeviceBudget: m.DeviceBudget}
		for _, w := range m.Weights {
			jm.Weights[w.Name] = w.Bytes
		}
		je.Memory = jm
		o.enc.Encode(je)
	case o.terminal != nil:
		if ev.Stage == pipeline.StageDone {
			return
		}
		line := ev.Stage.String() + "…"
		if ev.Step > 0 {
			line = fmt.Sprintf("step %d/%d · %.2f s/step · ETA %s", ev.Step, ev.Steps, ev.StepTime.Seconds(), roundETA(ev.ETA))
		}
		fmt.Fprintf(o.terminal, "\r%s\033[K", line)
	}
}

// notice reports a sentence about where the denoiser runs: a --json "notice" event, else a line
// on stderr (always, since a decline changes what the run costs).
func (o *generateOutput) notice(ev pipeline.Event) {
	if o.json {
		o.enc.Encode(jsonEvent{Stage: "notice", Notice: ev.Notice, Elapsed: ev.Elapsed.Seconds()})
		return
	}
	o.endProgress()
	fmt.Fprintf(o.stderr, "easel generate: %s\n", ev.Notice)
}

// backendChosen reports the backend choice: a --json "backend" event, or with --verbose a line
// on stderr.
func (o *generateOutput) backendChosen(c *backend.Choice) {
	switch {
	case o.json:
		o.enc.Encode(jsonEvent{Stage: "backend", Backend: c.Name(), Notice: c.Reason})
	case o.verbose:
		fmt.Fprintf(o.stderr, "easel generate: backend %s: %s\n", c.Asked, c.Reason)
	}
}

// roundETA keeps an ETA readable: tenths of a second below ten seconds, whole seconds above.
func roundETA(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

func (o *generateOutput) endProgress() {
	if o.terminal != nil {
		fmt.Fprint(o.terminal, "\r\033[K")
	}
}

func (o *generateOutput) failed(f *failure) {
	fmt.Fprintf(o.stderr, "easel generate: %v\n", f.err)
	if o.json {
		o.enc.Encode(jsonEvent{Stage: "failed", Error: f.err.Error(), ExitCode: f.code})
	}
}

func (o *generateOutput) saved(s *savedImage) {
	if o.json {
		o.enc.Encode(jsonEvent{Stage: "saved", Path: s.Path, Seed: &s.Seed, Elapsed: s.Elapsed.Seconds(), StageTimes: s.StageTimes, StageDevice: s.StageDeviceTimes})
		return
	}
	fmt.Fprintf(o.stdout, "%s: %d×%d, seed %d, %.1f s\n", s.Path, s.Width, s.Height, s.Seed, s.Elapsed.Seconds())
}

// applyFrom fills every setting not given on the command line from the settings embedded in the
// --from image, and finds its condition images in the same folder, checking their SHA-256.
func applyFrom(g *generateArgs, out *generateOutput) *failure {
	m, err := imagefile.ReadFile(g.from)
	if err != nil {
		return fail(ExitImage, "--from %s: %v", g.from, err)
	}
	s := m.Settings
	if s == nil {
		return fail(ExitImage, "--from %s: the image holds no Easel settings (it was not made by Easel, or its metadata was stripped)", g.from)
	}
	if !g.set["prompt"] {
		g.prompt = s.Prompt
	}
	if !g.set["negative"] {
		g.negative = s.NegativePrompt
	}
	if !g.set["size"] && !g.set["aspect"] {
		g.size = fmt.Sprintf("%dx%d", s.Width, s.Height)
	}
	if !g.set["resolution"] {
		g.resolution = s.Resolution
	}
	if !g.set["steps"] {
		g.steps = s.Steps
	}
	if !g.set["cfg"] {
		g.cfg = s.CFG
	}
	if !g.set["seed"] {
		g.seed = strconv.FormatUint(s.Seed, 10)
	}
	if !g.set["image"] {
		dir := filepath.Dir(g.from)
		for i, ref := range s.Images {
			path := filepath.Join(dir, ref.Name)
			data, err := os.ReadFile(path)
			if err != nil {
				return fail(ExitImage, "--from %s needs condition image %d, %s (sha256 %s), which is not beside it: pass the images with --image, in order", g.from, i+1, ref.Name, ref.SHA256)
			}
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != ref.SHA256 {
				return fail(ExitImage, "--from %s: %s is not the condition image it was made with (its SHA-256 differs): pass the original with --image", g.from, path)
			}
			g.images = append(g.images, path)
		}
	}
	if !g.set["lora"] && len(s.LoRAs) > 0 {
		dirs := []string{filepath.Dir(g.from)}
		if d, err := settings.LoRADir(); err == nil {
			dirs = append(dirs, d)
		}
		found, missing := loralib.Find(s.LoRAs, nil, dirs)
		if len(missing) > 0 {
			return fail(ExitLoRA, "--from %s: %s (or pass them with --lora)", g.from, loralib.MissingSentence(missing, dirs))
		}
		for i, path := range found {
			g.loras = append(g.loras, path+":"+strconv.FormatFloat(s.LoRAs[i].Strength, 'g', -1, 64))
		}
	}
	g.fromModelHash = s.ModelHash
	return nil
}

// loadLoRAs reads the --lora files, bound to the pipeline's denoiser; a file matching only some
// layers is applied with a note on stderr saying how many tensors were left out.
func loadLoRAs(specs []string, p *pipeline.Pipeline, out *generateOutput) ([]loralib.Applied, *failure) {
	if len(specs) == 0 {
		return nil, nil
	}
	lib := loralib.NewLibrary(p.LoRALayers())
	var applied []loralib.Applied
	for _, spec := range specs {
		path, strength, err := loralib.ParseSpec(spec)
		if err != nil {
			return nil, &failure{ExitLoRA, err}
		}
		f, err := lib.Load(path)
		if err != nil {
			return nil, &failure{ExitLoRA, err}
		}
		if w := f.Report.Warning(); w != "" {
			fmt.Fprintf(out.stderr, "easel generate: note: LoRA %s: %s\n", path, w)
		}
		applied = append(applied, loralib.Applied{File: f, Strength: strength})
	}
	return applied, nil
}
