package pipeline

import (
	"context"
	"time"

	"easel/engine/ml"
	"easel/engine/qi21"
)

// Denoiser runs the DiT for a Pipeline: qi21's prefill/step/release contract (docs/ARCHITECTURE.md §4), on the
// CPU model itself (the default) or on a device that implements the same contract (the Metal
// denoiser, see MetalDenoiser). Options.Denoiser chooses it.
type Denoiser interface {
	// Prefill runs one prompt's prefix (text [L, context], condition latents [CondLatents, in])
	// and keeps its K/V.
	Prefill(ctx context.Context, lay *qi21.Layout, text, condLatents []float32) (Program, error)
	// Step returns the velocity [T, out] of the target rows x [T, in] at σ.
	Step(ctx context.Context, prog Program, x []float32, sigma float32) ([]float32, error)
	// Release drops a program; releasing twice is harmless.
	Release(prog Program)
}

// Program is one prompt's prefilled prefix, wherever it lives. A program may also report
// KVElementBytes() int (the size of one cached value; 4 when it does not say) and Notice()
// string (a sentence for the user about where it ran, such as a device's decline).
type Program interface {
	Layout() *qi21.Layout
}

// A Denoiser may also report, for the memory ledger and the plan, KVElementBytes() int (the
// cache's element size for new programs) and DeviceBudget() int64 (the memory it may use), and
// Notice() string: a sentence for the user about where the denoiser runs (shown at the start of
// every run), DeviceTime() time.Duration (its device time so far, for Event.DeviceTime). Close()
// releases what it holds on a device; Pipeline.Close calls it.
type (
	deviceTimer interface{ DeviceTime() time.Duration }
	kvElementer interface{ KVElementBytes() int }
	budgeter    interface{ DeviceBudget() int64 }
	noticer     interface{ Notice() string }
	closer      interface{ Close() }
)

// CPUDenoiser runs the DiT on the model's own backend: the pipeline's default.
func CPUDenoiser(m *qi21.Model) Denoiser { return cpuDenoiser{m} }

type cpuDenoiser struct{ m *qi21.Model }

func (d cpuDenoiser) Prefill(ctx context.Context, lay *qi21.Layout, text, cond []float32) (Program, error) {
	p, err := d.m.Prefill(ctx, lay, text, cond)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (d cpuDenoiser) Step(ctx context.Context, prog Program, x []float32, sigma float32) ([]float32, error) {
	p, _ := prog.(*qi21.Program)
	return d.m.Step(ctx, p, x, sigma)
}

// KVElementBytes is the model's cache element size (half unless FloatKV).
func (d cpuDenoiser) KVElementBytes() int { return d.m.KVElementBytes() }

func (d cpuDenoiser) Release(prog Program) {
	if p, ok := prog.(*qi21.Program); ok {
		d.m.Release(p)
	}
}

// classTimes is the per-class time so far: the backend's, plus the device text encoder's and
// VAE's (their GPU time per class, kept only in profiling mode).
func (p *Pipeline) classTimes() [ml.NumClasses]ml.ClassTime {
	t := p.inner.Timings().Snapshot()
	var devs []*ml.Timings
	if v := p.vaeRun.r.Device(); v != nil {
		devs = append(devs, v.Timings())
	}
	if e := p.textRun.r.Device(); e != nil {
		devs = append(devs, e.Timings())
	}
	for _, d := range devs {
		for c, x := range d.Snapshot() {
			t[c].Time += x.Time
			t[c].Ops += x.Ops
			t[c].Flops += x.Flops
		}
	}
	return t
}

// deviceTime is the device time of the denoiser, the text encoder and the VAE so far, 0 when they
// have none.
func (p *Pipeline) deviceTime() time.Duration {
	t := p.vaeRun.deviceTime() + p.textRun.deviceTime()
	if d, ok := p.den.(deviceTimer); ok {
		t += d.DeviceTime()
	}
	return t
}
