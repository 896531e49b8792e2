package jobs

import (
	"context"
	"fmt"
	"sync"

	"easel/app/backend"
	"easel/app/settings"
	"easel/engine/cmf"
	"easel/engine/ml/cpu"
	"easel/engine/pipeline"
)

// ModelGenerator is the real Generator: it opens the model file and builds the pipeline on the
// first run (so the window opens at once), then reuses it. Backend is the artist's setting: the
// denoiser runs on Metal when app/backend chooses it (with the pipeline's decline → CPU
// fallback, reported in the events' Notice), the text encoder and the VAE on the CPU backend.
type ModelGenerator struct {
	Path    string
	Backend settings.Backend // "" means auto

	mu         sync.Mutex
	file       *cmf.File
	p          *pipeline.Pipeline
	loaded     string           // the path file and p were opened from
	loadedWith settings.Backend // the backend setting p was built with
	reason     string           // why the denoiser runs where it does
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
	return p.Run(ctx, req, events)
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
	f, err := cmf.Open(g.Path)
	if err != nil {
		return nil, err
	}
	p, err := pipeline.New(f, cpu.New(), choice.Options(f))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s cannot be used: %w", g.Path, err)
	}
	g.file, g.p, g.loaded, g.loadedWith, g.reason = f, p, g.Path, want, choice.Reason
	return p, nil
}

// Close releases the model file (after the queue is closed).
func (g *ModelGenerator) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.p = nil
	if g.file == nil {
		return nil
	}
	err := g.file.Close()
	g.file = nil
	return err
}
