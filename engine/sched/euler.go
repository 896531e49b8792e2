package sched

import "fmt"

// EulerStep advances the latents x in place by one flow-matching Euler step,
// x ← x + (σ_next − σ)·v, with v the denoiser's velocity for x at σ. Every product is rounded to
// float32 before the sum (no fused multiply-add), as torch computes it.
func EulerStep(x, v []float32, sigma, sigmaNext float32) error {
	if len(x) != len(v) {
		return fmt.Errorf("Euler step: latents have %d values but the velocity has %d", len(x), len(v))
	}
	dt := sigmaNext - sigma
	for i := range x {
		x[i] += float32(dt * v[i])
	}
	return nil
}

// Step is EulerStep from Sigmas[i] to Sigmas[i+1].
func (s Schedule) Step(i int, x, v []float32) error {
	if i < 0 || i >= s.Steps() {
		return fmt.Errorf("Euler step %d is outside the schedule's %d steps", i, s.Steps())
	}
	return EulerStep(x, v, s.Sigmas[i], s.Sigmas[i+1])
}

// PredictedX0 writes into dst the clean-image latents the step's velocity implies,
// x0 = x − σ·v (the preview shown after each step). dst may be x itself.
func PredictedX0(dst, x, v []float32, sigma float32) error {
	if len(x) != len(v) || len(dst) != len(x) {
		return fmt.Errorf("x0 estimate: latents, velocity and output have %d, %d and %d values", len(x), len(v), len(dst))
	}
	for i := range x {
		dst[i] = x[i] - float32(sigma*v[i])
	}
	return nil
}
