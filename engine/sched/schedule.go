package sched

import (
	"fmt"
	"math"
)

// Schedule is the grid one generation walks: Sigmas has one entry per step plus the terminal 0,
// Timesteps = Sigmas[:steps]·num_train_timesteps (what diffusers hands the transformer before it
// divides by 1000 again).
type Schedule struct {
	Sigmas    []float32 // len = Steps()+1, Sigmas[Steps()] = 0
	Timesteps []float32 // len = Steps()
}

// Steps is the number of denoiser calls.
func (s Schedule) Steps() int { return len(s.Timesteps) }

// Mu is the dynamic shift for a target of imageSeqLen tokens ((H/16)·(W/16)): the straight line
// through (base_image_seq_len, base_shift) and (max_image_seq_len, max_shift), not clamped, in
// float64 as the pipeline's calculate_shift computes it.
func (c Config) Mu(imageSeqLen int) float64 {
	m := (c.MaxShift - c.BaseShift) / float64(c.MaxImageSeqLen-c.BaseImageSeqLen)
	b := c.BaseShift - float64(m*float64(c.BaseImageSeqLen))
	return float64(float64(imageSeqLen)*m) + b
}

// Schedule is the pipeline's default schedule for steps denoiser calls on a target of
// imageSeqLen tokens: σ = linspace(1, 1/steps, steps), then shifted and stretched as
// ScheduleFromSigmas describes.
func (c Config) Schedule(steps, imageSeqLen int) (Schedule, error) {
	if steps < 1 {
		return Schedule{}, fmt.Errorf("a schedule needs at least 1 step, got %d", steps)
	}
	if imageSeqLen < 1 {
		return Schedule{}, fmt.Errorf("a schedule needs the target's token count, got %d", imageSeqLen)
	}
	return c.ScheduleFromSigmas(linspace(1, 1/float64(steps), steps), imageSeqLen)
}

// ScheduleFromSigmas is the schedule for explicit starting sigmas (one per step, without the
// terminal 0) — a distilled checkpoint's sample_sigmas, or a user's grid. They go through the same
// shift and stretch as the default grid, as diffusers' set_timesteps(sigmas=…) does; with the
// configuration such checkpoints ship (no dynamic shifting, shift 1, no shift_terminal) they come
// out unchanged apart from rounding to float32. imageSeqLen only matters with dynamic shifting.
func (c Config) ScheduleFromSigmas(sigmas []float64, imageSeqLen int) (Schedule, error) {
	if err := c.Validate(); err != nil {
		return Schedule{}, err
	}
	if len(sigmas) == 0 {
		return Schedule{}, fmt.Errorf("a schedule needs at least one sigma")
	}
	s := make([]float32, len(sigmas), len(sigmas)+1)
	for i, v := range sigmas {
		if !(v > 0 && v <= 1) {
			return Schedule{}, fmt.Errorf("sigma %d is %g: sigmas must lie in (0, 1]", i, v)
		}
		s[i] = float32(v)
	}
	if c.UseDynamicShifting {
		c.timeShift(c.Mu(imageSeqLen), s)
	} else {
		c.staticShift(s)
	}
	if c.ShiftTerminal != 0 {
		if err := c.stretchToTerminal(s); err != nil {
			return Schedule{}, err
		}
	}
	ts := make([]float32, len(s))
	scale := float32(c.NumTrainTimesteps)
	for i, v := range s {
		ts[i] = v * scale
	}
	return Schedule{Sigmas: append(s, 0), Timesteps: ts}, nil
}

// linspace is numpy.linspace(start, stop, n) in float64: start + i·step, the last entry exactly stop.
func linspace(start, stop float64, n int) []float64 {
	out := make([]float64, n)
	if n == 1 {
		out[0] = start
		return out
	}
	step := (stop - start) / float64(n-1)
	for i := range out {
		out[i] = float64(float64(i)*step) + start // the conversion forbids a fused multiply-add
	}
	out[n-1] = stop
	return out
}

// timeShift is diffusers' time_shift(mu, 1.0, σ) on a float32 array: exponential
// e^μ / (e^μ + (1/σ − 1)), or linear μ / (μ + (1/σ − 1)); numpy rounds every operation to float32.
func (c Config) timeShift(mu float64, s []float32) {
	k := float32(mu)
	if c.TimeShiftType == "exponential" {
		k = float32(math.Exp(mu))
	}
	for i, v := range s {
		odds := float32(float32(1)/v) - 1
		s[i] = k / float32(k+odds)
	}
}

// staticShift is shift·σ / (1 + (shift − 1)·σ) in float32, the shift used without dynamic shifting.
func (c Config) staticShift(s []float32) {
	shift := float32(c.Shift)
	shiftMinusOne := float32(c.Shift - 1)
	for i, v := range s {
		s[i] = float32(shift*v) / float32(1+float32(shiftMinusOne*v))
	}
}

// stretchToTerminal rescales 1 − σ so the last sigma lands on shift_terminal, in float32:
// σ ← 1 − (1 − σ) / ((1 − σ_last) / (1 − shift_terminal)).
func (c Config) stretchToTerminal(s []float32) error {
	last := 1 - s[len(s)-1]
	if last == 0 && len(s) == 1 {
		return nil // one step from σ = 1 goes straight to 0: nothing to stretch (diffusers divides 0 by 0 here)
	}
	if last == 0 {
		return fmt.Errorf("cannot stretch a grid of several sigmas whose last is 1 to shift_terminal %g: end the grid below 1", c.ShiftTerminal)
	}
	scale := last / float32(1-c.ShiftTerminal)
	for i, v := range s {
		s[i] = 1 - float32((1-v)/scale)
	}
	return nil
}
