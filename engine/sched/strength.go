package sched

import (
	"fmt"
	"math"
)

// StartStep is where a run that starts from an image enters a schedule of steps steps at a
// denoising strength in (0, 1]: diffusers' get_timesteps, init_timestep = min(steps·strength,
// steps) and t_start = int(max(steps − init_timestep, 0)), so the run does steps − t_start of the
// schedule's steps and strength 1 runs all of them. It fails when strength is outside (0, 1] or
// when fewer than one step would be left (a strength too small for the step count).
func StartStep(steps int, strength float64) (int, error) {
	if steps < 1 {
		return 0, fmt.Errorf("a schedule needs at least 1 step, got %d", steps)
	}
	if !(strength > 0 && strength <= 1) || math.IsNaN(strength) {
		return 0, fmt.Errorf("strength %g is outside (0, 1]: choose a value above 0 and at most 1 (1 repaints everything)", strength)
	}
	n := float64(steps)
	initTimestep := min(n*strength, n)
	start := int(max(n-initTimestep, 0))
	if steps-start < 1 {
		return 0, fmt.Errorf("strength %g leaves no step of %d to run: raise the strength to at least %g or use more steps", strength, steps, 1/n)
	}
	return start, nil
}

// From is the part of the schedule from step start on: its sigmas (with the terminal 0) and
// timesteps, as diffusers' scheduler.timesteps[t_start:] with set_begin_index(t_start). The
// first sigma of the result is the noise level a run that starts from an image begins at.
func (s Schedule) From(start int) (Schedule, error) {
	if start < 0 || start >= s.Steps() {
		return Schedule{}, fmt.Errorf("cannot start a schedule of %d steps at step %d", s.Steps(), start)
	}
	return Schedule{Sigmas: s.Sigmas[start:], Timesteps: s.Timesteps[start:]}, nil
}

// Renoise writes into dst the clean latents x0 noised to σ with noise: σ·noise + (1 − σ)·x0, each
// product rounded to float32 before the sum as torch computes diffusers' scale_noise (no fused
// multiply-add). At σ = 0 it is x0 exactly, at σ = 1 noise exactly. dst may alias either input.
func Renoise(dst, x0, noise []float32, sigma float32) error {
	if len(x0) != len(noise) || len(dst) != len(x0) {
		return fmt.Errorf("re-noising: latents, noise and output have %d, %d and %d values", len(x0), len(noise), len(dst))
	}
	switch sigma {
	case 0:
		copy(dst, x0)
		return nil
	case 1:
		copy(dst, noise)
		return nil
	}
	keep := 1 - sigma
	for i := range dst {
		dst[i] = float32(sigma*noise[i]) + float32(keep*x0[i])
	}
	return nil
}
