package seed

import "fmt"

// NoiseShape is the shape diffusers' randn_tensor draws the starting latents in for one image with
// channels latent channels (the model's z_dim, 64 for Qwen-Image-2.1) on an h×w latent grid
// (h = height/16, w = width/16): (batch 1, frame 1, channels, h, w). The frame axis comes before
// the channel axis, and elements are drawn in row-major order of this shape.
func NoiseShape(channels, h, w int) [5]int { return [5]int{1, 1, channels, h, w} }

// LatentNoise is the starting noise of a generation with this seed, channels latent channels and
// an h×w latent grid, in NoiseShape order (index c·h·w + y·w + x):
// torch.Generator("cpu").manual_seed(seed) then randn_tensor((1, 1, channels, h, w), dtype=float32).
// engine/latents packs it into the denoiser's token layout.
func LatentNoise(seed uint64, channels, h, w int) ([]float32, error) {
	if channels < 1 || h < 1 || w < 1 {
		return nil, fmt.Errorf("latent noise: %d channels on a %d×%d latent grid: all must be at least 1", channels, h, w)
	}
	return NewGenerator(seed).Randn(channels * h * w), nil
}
