package pipeline

import (
	"errors"
	"fmt"
)

// ErrResume is a Request.Resume that does not fit its request (another size, more steps than the
// schedule has, images the batch does not have).
var ErrResume = errors.New("the saved state does not fit this request")

// Resume continues a run from the state a StepState reported: the steps of image Image up to
// Step are not run again, and images before it are not denoised again. Since every step is a
// function of the latents, the step index and what the request recomputes (the prompt encoding,
// the prefill, the noise and the start image's latents), the result equals the uninterrupted
// run's bit for bit.
type Resume struct {
	// Image is the batch's image that was being made (0-based).
	Image int
	// Step is the number of that image's steps done (0 … the steps run); Latents its packed
	// latents after them [h·w, 64].
	Step    int
	Latents []float32
	// Finished are the final latents of the batch's images before Image, in order; Run decodes
	// them again into their results.
	Finished [][]float32
}

// StepState is a run's resumable state after one step, handed to Request.OnStep on the running
// goroutine before the next step begins. Its slices are the run's own: copy what you keep.
type StepState struct {
	// Image of Images is the batch's image being made (0-based); Step of Steps the steps of it
	// done (1-based: the step just finished).
	Image, Images int
	Step, Steps   int
	// Sigmas is the schedule walked (with the terminal 0); Latents the image's packed latents
	// after Step steps; Finished the final latents of the images before it.
	Sigmas   []float32
	Latents  []float32
	Finished [][]float32
}

// checkResume checks a Resume against the settings of its request: a batch of n images of
// values latent values each.
func checkResume(r *Resume, n, steps, values int) error {
	if r == nil {
		return nil
	}
	switch {
	case r.Image < 0 || r.Image >= n:
		return fmt.Errorf("%w: it is at image %d, the batch has %d", ErrResume, r.Image+1, n)
	case r.Step < 0 || r.Step > steps:
		return fmt.Errorf("%w: it is at step %d, the run has %d steps", ErrResume, r.Step, steps)
	case len(r.Latents) != values:
		return fmt.Errorf("%w: it holds %d latent values, the image size needs %d", ErrResume, len(r.Latents), values)
	case len(r.Finished) != r.Image:
		return fmt.Errorf("%w: it holds %d finished images before image %d", ErrResume, len(r.Finished), r.Image+1)
	}
	for i, f := range r.Finished {
		if len(f) != values {
			return fmt.Errorf("%w: finished image %d holds %d latent values, the image size needs %d", ErrResume, i+1, len(f), values)
		}
	}
	return nil
}
