package pipeline

import (
	"fmt"

	"easel/engine/sched"
)

// DenoiseInit makes Denoise start from an image's latents instead of pure noise (see InitImage).
type DenoiseInit struct {
	// Latents are the clean image's packed normalized latents [H·W, 64] (not modified).
	Latents []float32
	// Mask, when not nil, is the latent mask (LatentMask), one value per token: 0 keeps the
	// original, 1 repaints, m in between joins the denoising once σ has fallen to m·σ₀.
	Mask []float32
}

// blender keeps what a mask keeps: after step i it puts the original, re-noised to σ_{i+1} with
// the run's noise, into every token that is not denoising at that level. A token with mask value
// m denoises from the step that starts at σ ≤ m·σ₀ on (Differential Diffusion's threshold
// σ/σ₀, ComfyUI's DifferentialDiffusion); m = 0 never does, so it ends as the clean original,
// and m = 1 always does. With a binary mask this is diffusers' inpaint blend exactly.
type blender struct {
	x0, noise []float32
	mask      []float32
	ch        int
	sigma0    float32
	renoised  []float32
}

func newBlender(init *DenoiseInit, noise []float32, ch int, s sched.Schedule) (*blender, error) {
	if init == nil || init.Mask == nil {
		return nil, nil
	}
	if len(init.Mask)*ch != len(init.Latents) {
		return nil, fmt.Errorf("%w: a latent mask of %d tokens for %d latent values of %d channels", ErrSize, len(init.Mask), len(init.Latents), ch)
	}
	return &blender{x0: init.Latents, noise: noise, mask: init.Mask, ch: ch, sigma0: s.Sigmas[0], renoised: make([]float32, len(noise))}, nil
}

// denoising reports whether a token of mask value m is denoised by the step that starts at σ.
func (b *blender) denoising(m, sigma float32) bool {
	return m > 0 && m*b.sigma0 >= sigma
}

// apply blends x after the step from σ to next: a token that will not denoise at next gets the
// original re-noised to next. After the last step (next = 0) a token that did not denoise in it
// gets the clean original — the x0 it would have reached had its prediction been the original,
// as ComfyUI's inpaint sampler has it.
func (b *blender) apply(x []float32, sigma, next float32) error {
	if err := sched.Renoise(b.renoised, b.x0, b.noise, next); err != nil {
		return err
	}
	level := next
	if next == 0 {
		level = sigma
	}
	for t, m := range b.mask {
		if b.denoising(m, level) {
			continue
		}
		copy(x[t*b.ch:(t+1)*b.ch], b.renoised[t*b.ch:(t+1)*b.ch])
	}
	return nil
}
