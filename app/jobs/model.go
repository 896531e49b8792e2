package jobs

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"easel/app/backend"
	"easel/app/diagnose"
	"easel/app/settings"
	"easel/engine/cmf"
	"easel/engine/ml/cpu"
	"easel/engine/ml/metal"
	"easel/engine/mmapfile"
	"easel/engine/pipeline"
)

// ModelGenerator is the real Generator: it opens the model file and builds the pipeline on the
// first run (so the window opens at once), then reuses it. Backend is the artist's setting: the
// text encoder, the denoiser and the VAE run on Metal when app/backend chooses it (with the
// pipeline's decline → CPU fallback, reported in the events' Notice).
type ModelGenerator struct {
	Path    string
	Backend settings.Backend // "" means auto
	// SelfTestDir, when set, caches the first-use Metal self-test there (backend.Choice.SelfTest);
	// TuneDir, when set too, caches the kernel-variant choice per geometry class there, tuned on
	// first use of a class (backend.Choice.TuneDir). Both report their progress to the running
	// job (ReportStatus: the window's progress line).
	SelfTestDir string
	TuneDir     string
	// DiagnosticsDir, when set, is the app-support folder where each finished job's record goes
	// for `easel diagnose` (app/diagnose: stage times, GPU time per kernel class, peak memory per
	// stage, notices; nothing personal).
	DiagnosticsDir string
	// NoAutoTune keeps the kernels from being tuned on first use (SetAutoTune; cached choices
	// still run).
	NoAutoTune bool

	mu         sync.Mutex
	file       *cmf.File
	p          *pipeline.Pipeline
	loaded     string           // the path file and p were opened from
	loadedWith settings.Backend // the backend setting p was built with
	reason     string           // why the denoiser runs where it does
	// adjust changes the pipeline's options before it is built (tests wrap the denoiser).
	adjust func(pipeline.Options) pipeline.Options
	// choice is the backend p was built with (its tuner's last choice, Tuning).
	choice *backend.Choice

	// report is the running job's status reporter (statusMu: the self-test reports while mu is held).
	statusMu sync.Mutex
	report   context.Context
}

// status tells the running job's reporter.
func (g *ModelGenerator) status(s Status) {
	g.statusMu.Lock()
	ctx := g.report
	g.statusMu.Unlock()
	if ctx != nil {
		ReportStatus(ctx, s)
	}
}

// MetalDevice names the Metal device the opened pipeline runs on ("" before the first job, or on
// the CPU).
func (g *ModelGenerator) MetalDevice() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.choice == nil || !g.choice.Metal() {
		return ""
	}
	return g.choice.Device.Name()
}

// Tuning is the kernel-variant choice the last job's denoiser ran with on Metal (nil: the
// baseline kernels, or not on Metal) and the geometry class it was for (backend.Choice.Tuning).
func (g *ModelGenerator) Tuning() (*metal.TuneReport, string) {
	g.mu.Lock()
	c := g.choice
	g.mu.Unlock()
	if c == nil {
		return nil, ""
	}
	r, geometry, _ := c.Tuning()
	return r, geometry
}

// SetBackend switches the backend setting from the next job on.
func (g *ModelGenerator) SetBackend(b settings.Backend) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.Backend = b
}

// BackendReason says where the last opened pipeline runs its denoiser, and why ("" before the
// first job).
func (g *ModelGenerator) BackendReason() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reason
}

// SetAutoTune turns tuning the kernels on first use of a geometry class on or off from the next
// job on.
func (g *ModelGenerator) SetAutoTune(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.NoAutoTune = !on
	if g.choice != nil {
		g.choice.SetAutoTune(on)
	}
}

// SetPath switches to another model file from the next job on. The queue runs one job at a time,
// so the old file is closed only when no generation uses it.
func (g *ModelGenerator) SetPath(path string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.Path = path
}

// Run opens the model if needed and generates. Only the queue's worker calls it, one job at a
// time.
func (g *ModelGenerator) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	g.statusMu.Lock()
	g.report = ctx
	g.statusMu.Unlock()
	defer func() {
		g.statusMu.Lock()
		g.report = nil
		g.statusMu.Unlock()
	}()
	p, err := g.pipeline(ctx)
	if err != nil {
		if events != nil {
			close(events)
		}
		return nil, err
	}
	res, err := g.runRecorded(ctx, p, req, events)
	var fault *mmapfile.FaultError
	if errors.As(err, &fault) {
		// The file changed under its mapping (a drive unplugged, the file truncated or replaced):
		// let go of the mapping and the pipeline built on it; the next job opens the file again,
		// as it is then.
		g.drop(p)
	}
	return res, err
}

// runRecorded runs p and, with DiagnosticsDir set, records the finished job for `easel
// diagnose`, with the notices it sent (read on their way to events).
func (g *ModelGenerator) runRecorded(ctx context.Context, p *pipeline.Pipeline, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	g.mu.Lock()
	dir, model := g.DiagnosticsDir, g.loaded
	g.mu.Unlock()
	if dir == "" || events == nil {
		return p.Run(ctx, req, events)
	}
	seen := make(chan pipeline.Event, cap(events))
	notices := make(chan []string, 1)
	go func() {
		var ns []string
		for ev := range seen {
			if ev.Notice != "" {
				ns = append(ns, ev.Notice)
			}
			events <- ev
		}
		close(events)
		notices <- ns
	}()
	res, err := p.Run(ctx, req, seen)
	ns := <-notices // the pipeline closes seen after its last event
	if err == nil {
		backendName := p.Backend().Name()
		if dev := p.DenoiserDevice(); dev != "" {
			backendName = "metal (" + dev + ") + " + backendName
		}
		diagnose.RecordLastJob(dir, res, backendName, model, ns)
	}
	return res, err
}

// drop closes p and its model file if they are still the ones in use.
func (g *ModelGenerator) drop(p *pipeline.Pipeline) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.p != p {
		return
	}
	p.Close()
	g.file.Close()
	g.file, g.p, g.loaded = nil, nil, ""
}

// Released reports whether the generator holds no model file (before the first job, after Close,
// and after a job found the file changed).
func (g *ModelGenerator) Released() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.file == nil && g.p == nil
}

func (g *ModelGenerator) pipeline(ctx context.Context) (*pipeline.Pipeline, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	want := g.Backend
	if want == "" {
		want = settings.BackendAuto
	}
	if g.p != nil && g.loaded == g.Path && g.loadedWith == want {
		return g.p, nil
	}
	if g.file != nil {
		if g.p != nil {
			g.p.Close()
		}
		g.file.Close()
		g.file, g.p, g.loaded = nil, nil, ""
	}
	if g.Path == "" {
		return nil, fmt.Errorf("no model file is chosen: set one up first (Model → Choose…)")
	}
	choice, err := backend.Choose(want)
	if err != nil {
		return nil, err
	}
	choice.SelfTestDir, choice.TuneDir = g.SelfTestDir, g.TuneDir
	choice.SetAutoTune(!g.NoAutoTune)
	choice.SelfTestProgress = func(done, total int, kernel string) {
		g.status(Status{Line: SelfTestProgressText(done, total, kernel)})
	}
	choice.TuneProgress = func(done, total int, class, variant string) {
		g.status(Status{Line: backend.TuneProgressText(done, total, class, variant)})
	}
	choice.TuneNotice = func(n string) { g.status(Status{Notice: n}) }
	f, err := cmf.Open(g.Path)
	if err != nil {
		return nil, err
	}
	p, err := OpenPipelineContext(ctx, f, choice, g.adjust)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s cannot be used: %w", g.Path, err)
	}
	g.file, g.p, g.loaded, g.loadedWith, g.reason, g.choice = f, p, g.Path, want, choice.Reason, choice
	return p, nil
}

// OpenPipeline builds the pipeline over an open model file on the CPU backend, with the text
// encoder, the denoiser and the VAE placed as the backend choice says; adjust, when not nil,
// changes the options first (tests wrap the denoiser). It is how the window's queue and the CLI
// open a model. A fault reading the mapping (the tokenizer, the configs) is returned as its
// *mmapfile.FaultError.
func OpenPipeline(f *cmf.File, choice *backend.Choice, adjust func(pipeline.Options) pipeline.Options) (_ *pipeline.Pipeline, err error) {
	return OpenPipelineContext(context.Background(), f, choice, adjust)
}

// OpenPipelineContext is OpenPipeline whose first-use self-test stops when ctx is cancelled (the
// job that opened the model was).
func OpenPipelineContext(ctx context.Context, f *cmf.File, choice *backend.Choice, adjust func(pipeline.Options) pipeline.Options) (_ *pipeline.Pipeline, err error) {
	defer mmapfile.Recover(&err)
	defer mmapfile.Guard()()
	if choice.SelfTestDir != "" {
		// The first-use self-test (cached): a stage whose kernels fail it runs on the CPU with a
		// notice. A self-test that cannot run leaves the stages to their own declines.
		_, _, err := choice.SelfTest(ctx, f, choice.SelfTestDir, choice.SelfTestProgress)
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	opts := choice.Options(f)
	if adjust != nil {
		opts = adjust(opts)
	}
	return pipeline.New(f, cpu.New(), opts)
}

// Close releases the model file (after the queue is closed).
func (g *ModelGenerator) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.p != nil {
		g.p.Close()
	}
	g.p = nil
	if g.file == nil {
		return nil
	}
	err := g.file.Close()
	g.file = nil
	return err
}

// SelfTestProgressText is the progress line of the first-use GPU self-test: "Checking the GPU
// (first use on this Mac)… 3 of 12: ops_linear", or "" once it is over.
func SelfTestProgressText(done, total int, kernel string) string {
	if kernel == "" {
		return ""
	}
	return fmt.Sprintf("Checking the GPU (first use on this Mac)… %d of %d: %s", done+1, total, kernel)
}
