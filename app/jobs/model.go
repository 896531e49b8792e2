package jobs

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"easel/app/backend"
	"easel/app/settings"
	"easel/engine/cmf"
	"easel/engine/ml/cpu"
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
	// SelfTestDir, when set, caches the first-use Metal self-test there (backend.Choice.SelfTest).
	SelfTestDir string

	mu         sync.Mutex
	file       *cmf.File
	p          *pipeline.Pipeline
	loaded     string           // the path file and p were opened from
	loadedWith settings.Backend // the backend setting p was built with
	reason     string           // why the denoiser runs where it does
	// adjust changes the pipeline's options before it is built (tests wrap the denoiser).
	adjust func(pipeline.Options) pipeline.Options
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
	p, err := g.pipeline()
	if err != nil {
		if events != nil {
			close(events)
		}
		return nil, err
	}
	res, err := p.Run(ctx, req, events)
	var fault *mmapfile.FaultError
	if errors.As(err, &fault) {
		// The file changed under its mapping (a drive unplugged, the file truncated or replaced):
		// let go of the mapping and the pipeline built on it; the next job opens the file again,
		// as it is then.
		g.drop(p)
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

func (g *ModelGenerator) pipeline() (*pipeline.Pipeline, error) {
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
	choice.SelfTestDir = g.SelfTestDir
	f, err := cmf.Open(g.Path)
	if err != nil {
		return nil, err
	}
	p, err := OpenPipeline(f, choice, g.adjust)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s cannot be used: %w", g.Path, err)
	}
	g.file, g.p, g.loaded, g.loadedWith, g.reason = f, p, g.Path, want, choice.Reason
	return p, nil
}

// OpenPipeline builds the pipeline over an open model file on the CPU backend, with the text
// encoder, the denoiser and the VAE placed as the backend choice says; adjust, when not nil,
// changes the options first (tests wrap the denoiser). It is how the window's queue and the CLI
// open a model. A fault reading the mapping (the tokenizer, the configs) is returned as its
// *mmapfile.FaultError.
func OpenPipeline(f *cmf.File, choice *backend.Choice, adjust func(pipeline.Options) pipeline.Options) (_ *pipeline.Pipeline, err error) {
	defer mmapfile.Recover(&err)
	defer mmapfile.Guard()()
	if choice.SelfTestDir != "" {
		// The first-use self-test (cached): a stage whose kernels fail it runs on the CPU with a
		// notice. A self-test that cannot run leaves the stages to their own declines.
		_, _, _ = choice.SelfTest(context.Background(), f, choice.SelfTestDir, choice.SelfTestProgress)
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
