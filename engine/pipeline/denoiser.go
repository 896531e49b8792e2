package pipeline

import (
	"context"
	"time"

	"easel/engine/ml"
	"easel/engine/qi21"
)

// Denoiser runs the DiT for a Pipeline: qi21's prefill/step/release contract
// (docs/ARCHITECTURE.md §4), on the CPU model itself (the default) or on a device that implements
// the same contract (pipelinemetal's). Options.Denoiser places it.
type Denoiser interface {
	// Prefill runs one prompt's prefix (text [L, context], condition latents [CondLatents, in])
	// and keeps its K/V.
	Prefill(ctx context.Context, lay *qi21.Layout, text, condLatents []float32) (Program, error)
	// Step returns the velocity [T, out] of the target rows x [T, in] at σ.
	Step(ctx context.Context, prog Program, x []float32, sigma float32) ([]float32, error)
	// Release drops a program; releasing twice is harmless.
	Release(prog Program)
	// KVElementBytes is the size of one cached value of a new program (0: the backend's).
	KVElementBytes() int
	// ActivationBytes is what a new program of prefix and target rows holds on a device besides
	// its K/V; 0 where programs share the backend's activations.
	ActivationBytes(prefix, target int) int64
	// ReleaseWeights drops what a device holds over the model file's mapping between runs (the
	// next prefill makes it again) unless a program is live, and reports whether it holds none.
	ReleaseWeights() bool
}

// Program is one prompt's prefilled prefix, wherever it lives.
type Program interface {
	Layout() *qi21.Layout
	// KVElementBytes is the size of one of its cached values (0: the denoiser's).
	KVElementBytes() int
	// ActivationBytes is what it holds on a device besides its K/V (0: it shares the backend's).
	ActivationBytes(prefix, target int) int64
}

// CPUDenoiser runs the DiT on the model's own backend: the pipeline's default.
func CPUDenoiser(m *qi21.Model) Denoiser { return cpuDenoiser{m} }

type cpuDenoiser struct{ m *qi21.Model }

// cpuProgram is a program of the CPU model.
type cpuProgram struct{ *qi21.Program }

// ActivationBytes is 0: the CPU model's programs share the backend's activations.
func (cpuProgram) ActivationBytes(prefix, target int) int64 { return 0 }

func (d cpuDenoiser) Prefill(ctx context.Context, lay *qi21.Layout, text, cond []float32) (Program, error) {
	p, err := d.m.Prefill(ctx, lay, text, cond)
	if err != nil {
		return nil, err
	}
	return cpuProgram{p}, nil
}

func (d cpuDenoiser) Step(ctx context.Context, prog Program, x []float32, sigma float32) ([]float32, error) {
	p, _ := prog.(cpuProgram)
	return d.m.Step(ctx, p.Program, x, sigma)
}

func (d cpuDenoiser) Release(prog Program) {
	if p, ok := prog.(cpuProgram); ok {
		d.m.Release(p.Program)
	}
}

// KVElementBytes is the model's cache element size (half unless FloatKV).
func (d cpuDenoiser) KVElementBytes() int { return d.m.KVElementBytes() }

// ActivationBytes is 0: the CPU model's programs share the backend's activations.
func (cpuDenoiser) ActivationBytes(prefix, target int) int64 { return 0 }

// ReleaseWeights has nothing to drop: the CPU reads the weights from the mapping as it goes.
func (cpuDenoiser) ReleaseWeights() bool { return true }

// classTimes is the per-class time so far: the backend's, plus the device networks' (their GPU
// time per class, kept only in profiling mode).
func (p *Pipeline) classTimes() [ml.NumClasses]ml.ClassTime {
	t := p.inner.Timings().Snapshot()
	for _, n := range p.placements() {
		if n.Timings == nil {
			continue
		}
		for c, x := range n.Timings().Snapshot() {
			t[c].Time += x.Time
			t[c].Ops += x.Ops
			t[c].Flops += x.Flops
		}
	}
	return t
}

// gpuClasses is the GPU time per class of the denoiser, the text encoder and the VAE so far.
func (p *Pipeline) gpuClasses() ml.GPUClasses {
	var g ml.GPUClasses
	for _, n := range p.placements() {
		g = g.Plus(n.gpuClasses())
	}
	return g
}

// deviceTime is the device time of the denoiser, the text encoder and the VAE so far, 0 when they
// have none.
func (p *Pipeline) deviceTime() time.Duration {
	var t time.Duration
	for _, n := range p.placements() {
		t += n.deviceTime()
	}
	return t
}
