// Package pipelinetest helps tests of code that runs a pipeline: a denoiser that calls back
// before chosen steps (on the pipeline's own goroutine, so what the callback does — truncating
// the model file, say — happens exactly there) and counts the programs it holds.
package pipelinetest

import (
	"context"
	"sync"

	"easel/engine/pipeline"
	"easel/engine/qi21"
)

// Watch observes the denoisers WatchDenoiser makes, across every pipeline they are built for.
type Watch struct {
	// BeforeStep, when not nil, runs before every denoiser step with the step calls so far
	// (1 for the first; under CFG each prompt's step counts).
	BeforeStep func(n int)

	mu       sync.Mutex
	steps    int
	prefills int
	live     map[pipeline.Program]bool
}

// Prefills is the number of programs prefilled so far (one per prompt a run encodes).
func (w *Watch) Prefills() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.prefills
}

// Live is the number of programs prefilled and not yet released.
func (w *Watch) Live() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.live)
}

// Steps is the number of step calls so far.
func (w *Watch) Steps() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.steps
}

// WatchDenoiser returns opts with its denoiser (the CPU one when opts places none) wrapped for w.
// The wrapper runs prefill, step and release; the denoiser's placement (notices, device time,
// Close) is passed on as it is.
func WatchDenoiser(opts pipeline.Options, w *Watch) pipeline.Options {
	inner := opts.Denoiser
	opts.Denoiser = func(s pipeline.Site, m *qi21.Model) (pipeline.Denoiser, pipeline.Placement, error) {
		d, pl := pipeline.CPUDenoiser(m), pipeline.Placement{}
		if inner != nil {
			var err error
			if d, pl, err = inner(s, m); err != nil {
				return nil, pl, err
			}
		}
		return &watched{Denoiser: d, w: w}, pl, nil
	}
	return opts
}

type watched struct {
	pipeline.Denoiser
	w *Watch
}

func (d *watched) Prefill(ctx context.Context, lay *qi21.Layout, text, cond []float32) (pipeline.Program, error) {
	p, err := d.Denoiser.Prefill(ctx, lay, text, cond)
	if err == nil {
		d.w.mu.Lock()
		if d.w.live == nil {
			d.w.live = map[pipeline.Program]bool{}
		}
		d.w.live[p] = true
		d.w.prefills++
		d.w.mu.Unlock()
	}
	return p, err
}

func (d *watched) Step(ctx context.Context, prog pipeline.Program, x []float32, sigma float32) ([]float32, error) {
	d.w.mu.Lock()
	d.w.steps++
	n := d.w.steps
	d.w.mu.Unlock()
	if d.w.BeforeStep != nil {
		d.w.BeforeStep(n)
	}
	return d.Denoiser.Step(ctx, prog, x, sigma)
}

func (d *watched) Release(prog pipeline.Program) {
	d.w.mu.Lock()
	delete(d.w.live, prog)
	d.w.mu.Unlock()
	d.Denoiser.Release(prog)
}
