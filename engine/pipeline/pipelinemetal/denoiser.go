package pipelinemetal

import (
	"context"
	"errors"
	"fmt"

	"easel/engine/ml/metal"
	"easel/engine/pipeline"
	"easel/engine/qi21"
	"easel/engine/qi21/qi21metal"
	"easel/kernels/device"
)

// Denoiser places the DiT on dev through qi21metal.Runner: each prompt is prefilled on the
// device, or on the CPU model when the device declines it (the site hears why), and the prompt's
// steps follow it. mapping is the model file's whole mapping ((*cmf.File).Bytes()), which the
// device reads the weights from in place.
//
// The device holds the denoiser's weight arena (no-copy buffers over the mapping) only while it
// runs: from a prefill until Denoise has released its programs (ReleaseWeights), so the text
// encoder and the VAE run beside its small auxiliary weights alone (Placement.Resident).
//
// When the device declines the whole model (too little memory, a codec the kernels do not read)
// the DiT runs on the CPU and the notice says why. Other failures are errors. What the device
// recovers from during a run (recovery.go) goes to the site as pipeline.Recovery records.
func Denoiser(dev device.Device, mapping []byte, opts qi21metal.Options) pipeline.Place[pipeline.Denoiser, *qi21.Model] {
	return func(s pipeline.Site, m *qi21.Model) (pipeline.Denoiser, pipeline.Placement, error) {
		rc := recoverer{s}
		o := opts
		o.OnRetry = func(r metal.Retry) {
			if opts.OnRetry != nil {
				opts.OnRetry(r)
			}
			rc.retried(r)
		}
		d, err := qi21metal.New(dev, m, mapping, o)
		var declined *metal.Declined
		if errors.As(err, &declined) {
			return pipeline.CPUDenoiser(m), pipeline.Placement{Notice: decline(declined).Notice("the denoiser")}, nil
		}
		if err != nil {
			return nil, pipeline.Placement{}, fmt.Errorf("the Metal denoiser on %s: %w", dev.Name(), err)
		}
		r, err := qi21metal.NewRunner(d, m, reporter(s))
		if err != nil {
			d.Close()
			return nil, pipeline.Placement{}, err
		}
		r.SetStepDecline(rc.stepDeclined)
		// New made the weight arena (so a device that cannot wrap the mapping fails here); the
		// first prefill makes it again, and nothing of the denoiser's but its small auxiliary
		// weights is on the device before then.
		d.ReleaseWeights()
		return &denoiser{d: d, r: r, cpu: m}, pipeline.Placement{
			Notice:     "the denoiser runs on Metal (" + d.DeviceName() + ")",
			Device:     d.DeviceName(),
			Budget:     d.WorkingSet(),
			DeviceTime: d.DeviceTime,
			GPUClasses: d.GPUClasses,
			Resident:   d.Resident,
			Close:      d.Close,
		}, nil
	}
}

// denoiser adapts a qi21metal.Runner to pipeline.Denoiser.
type denoiser struct {
	d   *qi21metal.Denoiser
	r   *qi21metal.Runner
	cpu *qi21.Model // the model a declined prompt runs on
}

// program is a prompt's program on whichever side the runner put it.
type program struct {
	*qi21metal.RunnerProgram
	d   *qi21metal.Denoiser
	cpu *qi21.Model
}

// KVElementBytes is half on the device, the CPU model's after a fallback to it.
func (p *program) KVElementBytes() int {
	if p.OnDevice() {
		return 2
	}
	return p.cpu.KVElementBytes()
}

// ActivationBytes is what the program holds on the device besides its K/V (0 on the CPU, where
// programs share the backend's activations).
func (p *program) ActivationBytes(prefix, target int) int64 {
	if !p.OnDevice() {
		return 0
	}
	return p.d.ActivationBytes(prefix, target)
}

func (md *denoiser) Prefill(ctx context.Context, lay *qi21.Layout, text, cond []float32) (pipeline.Program, error) {
	p, err := md.r.Prefill(ctx, lay, text, cond)
	if err != nil {
		return nil, err
	}
	return &program{RunnerProgram: p, d: md.d, cpu: md.cpu}, nil
}

func (md *denoiser) Step(ctx context.Context, prog pipeline.Program, x []float32, sigma float32) ([]float32, error) {
	p, ok := prog.(*program)
	if !ok {
		return nil, errors.New("the program was not prefilled by the Metal denoiser")
	}
	return md.r.Step(ctx, p.RunnerProgram, x, sigma)
}

func (md *denoiser) Release(prog pipeline.Program) {
	if p, ok := prog.(*program); ok {
		md.r.Release(p.RunnerProgram)
	}
}

// ReleaseWeights drops the denoiser's weight arena on the device between runs (the next prefill
// makes it again) unless a program is live, and reports whether the device holds none of the
// denoiser's weights read in place from the mapping.
func (md *denoiser) ReleaseWeights() bool { return md.d.ReleaseWeights() }

func (md *denoiser) ActivationBytes(prefix, target int) int64 {
	return md.d.ActivationBytes(prefix, target)
}

func (md *denoiser) KVElementBytes() int { return md.d.KVElementBytes() }
