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
