package qi21metal

import (
	"context"
	"errors"
	"fmt"

	"easel/engine/ml/metal"
	"easel/engine/qi21"
)

// Runner is the qi21 prefill/step/release contract with the device path's fallback: each prompt is
// prefilled on the Metal denoiser when it accepts it and on the CPU model when it declines (or
// when there is no Metal denoiser), and the prompt's steps follow it.
type Runner struct {
	gpu       *Denoiser   // nil: everything runs on cpu
	cpu       *qi21.Model // the same transformer on its host backend
	onDecline func(*metal.Declined)
	// onStepDecline, when set, is told a step's decline instead of onDecline (SetStepDecline).
	onStepDecline func(*metal.Declined)
	// onCPU is set once a step declined on the device (an overflow the guards could not fix, a
	// GPU error): every later step of the run, of either program, runs on the CPU. The next
	// run's first prefill clears it (a run prefills all its programs before its first step).
	onCPU bool
}

// SetStepDecline makes f hear the declines of steps (after which the prompt and every later step
// of the run go to the CPU) instead of the function NewRunner was given, which then hears the
// prefills' only.
func (r *Runner) SetStepDecline(f func(*metal.Declined)) { r.onStepDecline = f }

// NewRunner pairs a Metal denoiser (nil for none) with the CPU model it was built from.
// onDecline, when not nil, is told each decline.
func NewRunner(gpu *Denoiser, cpu *qi21.Model, onDecline func(*metal.Declined)) (*Runner, error) {
	if cpu == nil {
		return nil, fmt.Errorf("qi21metal.NewRunner: no CPU model to fall back on")
	}
	if gpu != nil && gpu.model != cpu {
		return nil, fmt.Errorf("qi21metal.NewRunner: the Metal denoiser was built from another model")
	}
	return &Runner{gpu: gpu, cpu: cpu, onDecline: onDecline}, nil
}

// Device is the Metal denoiser, or nil when everything runs on the CPU.
func (r *Runner) Device() *Denoiser { return r.gpu }

// Close frees the Metal denoiser's memory.
func (r *Runner) Close() {
	if r.gpu != nil {
		r.gpu.Close()
	}
}

// RunnerProgram is a prompt's program on whichever side ran its prefill.
type RunnerProgram struct {
	gpu *Program
	cpu *qi21.Program
	// the prefill's inputs, kept while the program is on the device so a declined step can
	// prefill the prompt on the CPU and go on there
	lay        *qi21.Layout
	text, cond []float32
}

// OnDevice reports whether the program lives on the Metal device.
func (p *RunnerProgram) OnDevice() bool { return p != nil && p.gpu != nil }

// Layout is the joint layout the program was prefilled with.
func (p *RunnerProgram) Layout() *qi21.Layout {
	if p.gpu != nil {
		return p.gpu.Layout()
	}
	return p.cpu.Layout()
}

// Prefill runs the prefix on the device, or on the CPU when the device declines. A prefill starts
// a run: a step's move to the CPU in an earlier run does not hold for it.
func (r *Runner) Prefill(ctx context.Context, lay *qi21.Layout, text, condLatents []float32) (*RunnerProgram, error) {
	r.onCPU = false
	var device func() (*RunnerProgram, error)
	if r.gpu != nil {
		device = func() (*RunnerProgram, error) {
			p, err := r.gpu.Prefill(ctx, lay, text, condLatents)
			if err != nil {
				return nil, err
			}
			return &RunnerProgram{gpu: p, lay: lay, text: text, cond: condLatents}, nil
		}
	}
	p, _, err := metal.Try(device, func() (*RunnerProgram, error) {
		p, err := r.cpu.Prefill(ctx, lay, text, condLatents)
		if err != nil {
			return nil, err
		}
		return &RunnerProgram{cpu: p}, nil
	}, r.onDecline)
	return p, err
}

// Step runs the target rows at σ where the program lives.
func (r *Runner) Step(ctx context.Context, p *RunnerProgram, x []float32, sigma float32) ([]float32, error) {
	switch {
	case p == nil:
		return nil, fmt.Errorf("qi21metal.Runner.Step: no program")
	case p.gpu != nil && !r.onCPU:
		v, err := r.gpu.Step(ctx, p.gpu, x, sigma)
		if err == nil || !r.declined(err) {
			return v, err
		}
		r.onCPU = true
		fallthrough
	case p.gpu != nil:
		if err := r.moveToCPU(ctx, p); err != nil {
			return nil, err
		}
	}
	return r.cpu.Step(ctx, p.cpu, x, sigma)
}

// declined reports whether err (a step's) is the device's decline and, when it is, tells
// onStepDecline or else onDecline.
func (r *Runner) declined(err error) bool {
	var d *metal.Declined
	if !errors.As(err, &d) {
		return false
	}
	switch {
	case r.onStepDecline != nil:
		r.onStepDecline(d)
	case r.onDecline != nil:
		r.onDecline(d)
	}
	return true
}

// moveToCPU prefills p's prompt on the CPU and releases its device program.
func (r *Runner) moveToCPU(ctx context.Context, p *RunnerProgram) error {
	cp, err := r.cpu.Prefill(ctx, p.lay, p.text, p.cond)
	if err != nil {
		return fmt.Errorf("qi21metal.Runner: moving the prompt to the CPU after the device declined: %w", err)
	}
	r.gpu.Release(p.gpu)
	p.gpu, p.cpu, p.text, p.cond = nil, cp, nil, nil
	return nil
}

// Release drops the program on its side. Releasing twice is harmless.
func (r *Runner) Release(p *RunnerProgram) {
	switch {
	case p == nil:
	case p.gpu != nil:
		r.gpu.Release(p.gpu)
	default:
		r.cpu.Release(p.cpu)
	}
}
