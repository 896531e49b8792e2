package vae

import (
	"context"
	"fmt"
)

// EncodeTiled is Encode for images of any size with bounded memory. The tiling is on the latent
// grid (H/Scale × W/Scale), as DecodeTiled's: each tile of Tile·Scale pixels a side (at most),
// sharing at least Overlap·Scale pixels with each neighbour, starts on a latent boundary and is
// encoded on its own (its mid-block attention sees only the tile), and the tiles' modes — the
// mean half of quant_conv's output, before the normalization — are cross-faded linearly in latent
// space where they overlap, the same ramps DecodeTiled uses in pixel space. The blended mode is
// then normalized as Encode's is. An image whose latent grid fits in one tile encodes exactly as
// Encode.
func (m *Model) EncodeTiled(ctx context.Context, img *Image, t Tiling) (mode, normalized *Latents, err error) {
	if err := t.check(); err != nil {
		return nil, nil, err
	}
	if err := m.checkImage(img); err != nil {
		return nil, nil, err
	}
	if mode, err = blendEncodedTiles(ctx, img, t, m.cfg.Scale(), m.cfg.ZDim, m.encodeRaw); err != nil {
		return nil, nil, err
	}
	if normalized, err = m.Normalize(mode); err != nil {
		return nil, nil, err
	}
	return mode, normalized, nil
}

// blendEncodedTiles encodes img tile by tile with encode (image → latents at 1/scale of its size)
// and returns the weighted average of the tiles' latents.
func blendEncodedTiles(ctx context.Context, img *Image, t Tiling, scale, channels int, encode func(context.Context, *Image) (*Latents, error)) (*Latents, error) {
	h, w := img.H/scale, img.W/scale
	ys, th := t.spans(h)
	xs, tw := t.spans(w)
	// The blend is DecodeTiled's at one pixel per latent: a latent grid is laid out as an image.
	out := &Image{C: channels, H: h, W: w, Pix: make([]float32, channels*h*w)}
	weightSum := make([]float32, h*w)
	err := eachImageTile(ctx, img, t, scale, encode, func(tile *Latents, iy, ix int) error {
		if tile.C != channels || tile.H != th || tile.W != tw || len(tile.Data) != channels*th*tw {
			return fmt.Errorf("tile at latent (%d, %d) of %d×%d encoded to %d×%d×%d, want %d×%d×%d", ys[iy], xs[ix], h, w, tile.C, tile.H, tile.W, channels, th, tw)
		}
		asImage := &Image{C: tile.C, H: tile.H, W: tile.W, Pix: tile.Data}
		accumulate(out, weightSum, asImage, ys[iy], xs[ix], blendRamp(ys, iy, th, 1), blendRamp(xs, ix, tw, 1))
		return nil
	})
	if err != nil {
		return nil, err
	}
	plane := h * w
	for i := range out.Pix {
		out.Pix[i] /= weightSum[i%plane]
	}
	return &Latents{C: channels, H: h, W: w, Data: out.Pix}, nil
}

// eachImageTile encodes img's tiles in order (rows of tiles, top to bottom) and hands each encoded
// tile with its row and column index to use (nil: encode only, as a plan's dry run does: the blend
// touches only host memory, which a plan does not count).
func eachImageTile(ctx context.Context, img *Image, t Tiling, scale int, encode func(context.Context, *Image) (*Latents, error), use func(tile *Latents, iy, ix int) error) error {
	h, w := img.H/scale, img.W/scale
	ys, th := t.spans(h)
	xs, tw := t.spans(w)
	for iy, y0 := range ys {
		for ix, x0 := range xs {
			tile, err := encode(ctx, img.crop(scale*y0, scale*x0, scale*th, scale*tw))
			if err != nil {
				return fmt.Errorf("tile at latent (%d, %d) of %d×%d: %w", y0, x0, h, w, err)
			}
			if use != nil {
				if err := use(tile, iy, ix); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// crop copies the h×w window at pixel (y0, x0) of every channel.
func (img *Image) crop(y0, x0, h, w int) *Image {
	out := &Image{C: img.C, H: h, W: w, Pix: make([]float32, img.C*h*w)}
	for c := 0; c < img.C; c++ {
		for y := 0; y < h; y++ {
			src := img.Pix[(c*img.H+y0+y)*img.W+x0:]
			copy(out.Pix[(c*h+y)*w:(c*h+y+1)*w], src[:w])
		}
	}
	return out
}
