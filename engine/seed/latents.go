package seed

import "fmt"

// LatentChannels is the number of latent channels of Qwen-Image-2.1 (z_dim of its VAE).
const LatentChannels = 64

// NoiseShape is the shape diffusers' randn_tensor draws the starting latents in for one image with
// an h×w latent grid (h = height/16, w = width/16): (batch 1, frame 1, channels, h, w). The frame
// axis comes before the channel axis, and elements are drawn in row-major order of this shape.
func NoiseShape(h, w int) [5]int { return [5]int{1, 1, LatentChannels, h, w} }

// LatentNoise is the starting noise of a generation with this seed and an h×w latent grid, in
// NoiseShape order (index c·h·w + y·w + x): torch.Generator("cpu").manual_seed(seed) then
// randn_tensor((1, 1, 64, h, w), dtype=float32).
func LatentNoise(seed uint64, h, w int) ([]float32, error) {
	if h < 1 || w < 1 {
		return nil, fmt.Errorf("latent noise: the latent grid is %d×%d: both sides must be at least 1", h, w)
	}
	return NewGenerator(seed).Randn(LatentChannels * h * w), nil
}

// PackLatents converts latents from the channel-major layout (channels, h, w) — NoiseShape and the
// VAE's (1, 64, 1, h, w) — to the packed layout the denoiser works in: one token per latent pixel
// in raster order (token y·w + x), its channels contiguous, index (y·w + x)·channels + c. This is
// diffusers' _pack_latents, latents.view(1, channels, h·w).transpose(1, 2).
func PackLatents(latents []float32, channels, h, w int) ([]float32, error) {
	if err := checkLatentSize("pack", len(latents), channels, h, w); err != nil {
		return nil, err
	}
	tokens := h * w
	packed := make([]float32, len(latents))
	for c := 0; c < channels; c++ {
		plane := latents[c*tokens : (c+1)*tokens]
		for t, v := range plane {
			packed[t*channels+c] = v
		}
	}
	return packed, nil
}

// UnpackLatents is the inverse of PackLatents: packed tokens (h·w, channels) back to the
// channel-major (channels, h, w) layout the VAE decoder takes (diffusers' _unpack_latents).
func UnpackLatents(packed []float32, channels, h, w int) ([]float32, error) {
	if err := checkLatentSize("unpack", len(packed), channels, h, w); err != nil {
		return nil, err
	}
	tokens := h * w
	latents := make([]float32, len(packed))
	for t := 0; t < tokens; t++ {
		row := packed[t*channels : (t+1)*channels]
		for c, v := range row {
			latents[c*tokens+t] = v
		}
	}
	return latents, nil
}

func checkLatentSize(op string, n, channels, h, w int) error {
	if channels < 1 || h < 1 || w < 1 {
		return fmt.Errorf("%s latents: %d channels on a %d×%d grid: all must be at least 1", op, channels, h, w)
	}
	if n != channels*h*w {
		return fmt.Errorf("%s latents: got %d values, want %d channels × %d × %d = %d", op, n, channels, h, w, channels*h*w)
	}
	return nil
}
