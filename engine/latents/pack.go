// Package latents converts latent grids between the two layouts Easel holds them in: channel-major
// (channels, h, w), as the starting noise is drawn (engine/seed) and as the VAE reads and writes
// them, and packed, one token per latent pixel in raster order with its channels contiguous, as
// the denoiser works on them (diffusers' _pack_latents and _unpack_latents). The channel count is
// always the caller's, from the model's config; nothing here assumes 64.
package latents

import "fmt"

// Pack converts latents from the channel-major layout (channels, h, w) to the packed layout: token
// y·w + x, index (y·w + x)·channels + c. This is diffusers' _pack_latents,
// latents.view(1, channels, h·w).transpose(1, 2).
func Pack(planar []float32, channels, h, w int) ([]float32, error) {
	if err := checkSize("pack", len(planar), channels, h, w); err != nil {
		return nil, err
	}
	tokens := h * w
	packed := make([]float32, len(planar))
	for c := 0; c < channels; c++ {
		plane := planar[c*tokens : (c+1)*tokens]
		for t, v := range plane {
			packed[t*channels+c] = v
		}
	}
	return packed, nil
}

// Unpack is the inverse of Pack: packed tokens (h·w, channels) back to the channel-major
// (channels, h, w) layout (diffusers' _unpack_latents).
func Unpack(packed []float32, channels, h, w int) ([]float32, error) {
	if err := checkSize("unpack", len(packed), channels, h, w); err != nil {
		return nil, err
	}
	tokens := h * w
	planar := make([]float32, len(packed))
	for t := 0; t < tokens; t++ {
		row := packed[t*channels : (t+1)*channels]
		for c, v := range row {
			planar[c*tokens+t] = v
		}
	}
	return planar, nil
}

func checkSize(op string, n, channels, h, w int) error {
	if channels < 1 || h < 1 || w < 1 {
		return fmt.Errorf("%s latents: %d channels on a %d×%d grid: all must be at least 1", op, channels, h, w)
	}
	if n != channels*h*w {
		return fmt.Errorf("%s latents: got %d values, want %d channels × %d × %d = %d", op, n, channels, h, w, channels*h*w)
	}
	return nil
}
