package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"easel/engine/ml/metal"
	"easel/engine/qi21"
	"easel/engine/qi21/qi21metal"
	"easel/kernels/device"
)

// MetalDenoiser is an Options.Denoiser that runs the DiT on a Metal device (the Mac's, or the
// emulator's in tests) through qi21metal.Runner: each prompt is prefilled on the device, or on the
// CPU model when the device declines it, and the prompt's steps follow it. mapping is the model
// file's whole mapping ((*cmf.File).Bytes()), which the device reads the weights from in place.
//
// The device holds the denoiser's weight arena (no-copy buffers over the mapping) only while it
// runs: from a prefill until Denoise has released its programs (weightReleaser), so the text
// encoder and the VAE run beside its small auxiliary weights alone.
//
// When the device declines the whole model (too little memory, a codec the kernels do not read)
// the DiT runs on the CPU and the denoiser's Notice says why; a decline of one prompt is the
// program's Notice, which Run reports as an event. Other failures are errors.
func MetalDenoiser(dev device.Device, mapping []byte, opts qi21metal.Options) func(*qi21.Model) (Denoiser, error) {
	return func(m *qi21.Model) (Denoiser, error) {
		d, err := qi21metal.New(dev, m, mapping, opts)
		var declined *metal.Declined
		if errors.As(err, &declined) {
			return &fallbackDenoiser{cpuDenoiser{m}, "Metal declined the denoiser: " + declined.Reason + "; the CPU runs it instead"}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("the Metal denoiser on %s: %w", dev.Name(), err)
		}
		md := &metalDenoiser{d: d, cpu: m}
		if md.r, err = qi21metal.NewRunner(d, m, md.declined); err != nil {
			d.Close()
			return nil, err
		}
		// New made the weight arena (so a device that cannot wrap the mapping fails here); the
		// first prefill makes it again, and nothing of the denoiser's but its small auxiliary
		// weights is on the device before then.
		d.ReleaseWeights()
		return md, nil
	}
}

// reason is the sentence inside a *metal.Declined's message (qi21metal.Runner reports declines as
// text).
func reason(msg string) string {
	msg = strings.TrimPrefix(msg, "metal: declined: ")
	return strings.TrimSuffix(msg, " — the CPU backend runs this instead")
}

// fallbackDenoiser is the CPU model after the device declined the whole model.
type fallbackDenoiser struct {
	cpuDenoiser
	notice string
}

func (f *fallbackDenoiser) Notice() string { return f.notice }

// metalDenoiser adapts a qi21metal.Runner to Denoiser.
type metalDenoiser struct {
	d   *qi21metal.Denoiser
	r   *qi21metal.Runner
	cpu *qi21.Model // the model a declined prompt runs on

	mu      sync.Mutex
	pending []string // declines of the prefill in progress
}

func (md *metalDenoiser) declined(format string, args ...any) {
	md.mu.Lock()
	md.pending = append(md.pending, fmt.Sprintf(format, args...))
	md.mu.Unlock()
}

// metalProgram is a prompt's program on whichever side the runner put it.
type metalProgram struct {
	*qi21metal.RunnerProgram
	d      *qi21metal.Denoiser
	cpu    *qi21.Model
	notice string
}

// KVElementBytes is half on the device, the CPU model's after a fallback to it.
func (p *metalProgram) KVElementBytes() int {
	if p.OnDevice() {
		return 2
	}
	return p.cpu.KVElementBytes()
}

func (p *metalProgram) Notice() string { return p.notice }

// ActivationBytes is what the program holds on the device besides its K/V (0 on the CPU, where
// programs share the backend's activations).
func (p *metalProgram) ActivationBytes(prefix, target int) int64 {
	if !p.OnDevice() {
		return 0
	}
	return p.d.ActivationBytes(prefix, target)
}

func (md *metalDenoiser) Prefill(ctx context.Context, lay *qi21.Layout, text, cond []float32) (Program, error) {
	md.mu.Lock()
	md.pending = nil
	md.mu.Unlock()
	p, err := md.r.Prefill(ctx, lay, text, cond)
	if err != nil {
		return nil, err
	}
	prog := &metalProgram{RunnerProgram: p, d: md.d, cpu: md.cpu}
	md.mu.Lock()
	if len(md.pending) > 0 {
		prog.notice = "Metal declined a prompt: " + reason(md.pending[len(md.pending)-1]) + "; the CPU runs it instead"
	}
	md.pending = nil
	md.mu.Unlock()
	return prog, nil
}

func (md *metalDenoiser) Step(ctx context.Context, prog Program, x []float32, sigma float32) ([]float32, error) {
	p, ok := prog.(*metalProgram)
	if !ok {
		return nil, errors.New("the program was not prefilled by the Metal denoiser")
	}
	return md.r.Step(ctx, p.RunnerProgram, x, sigma)
}

func (md *metalDenoiser) Release(prog Program) {
	if p, ok := prog.(*metalProgram); ok {
		md.r.Release(p.RunnerProgram)
	}
}

// ReleaseWeights drops the denoiser's weight arena on the device between runs (the next prefill
// makes it again) unless a program is live, and reports whether the device holds none of the
// denoiser's weights read in place from the mapping.
func (md *metalDenoiser) ReleaseWeights() bool { return md.d.ReleaseWeights() }

func (md *metalDenoiser) ActivationBytes(prefix, target int) int64 {
	return md.d.ActivationBytes(prefix, target)
}
func (md *metalDenoiser) DeviceTime() time.Duration { return md.d.DeviceTime() }
func (md *metalDenoiser) KVElementBytes() int       { return md.d.KVElementBytes() }
func (md *metalDenoiser) DeviceBudget() int64       { return md.d.WorkingSet() }
func (md *metalDenoiser) Close()                    { md.d.Close() }
func (md *metalDenoiser) Notice() string {
	return "the denoiser runs on Metal (" + md.d.DeviceName() + ")"
}
