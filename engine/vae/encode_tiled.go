package vae

import "context"

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
// and returns the weighted average of the tiles' latents: DecodeTiled's blend at one value per
// latent.
func blendEncodedTiles(ctx context.Context, img *Image, t Tiling, scale, channels int, encode func(context.Context, *Image) (*Latents, error)) (*Latents, error) {
	out, err := blendGrid(ctx, t, img.H/scale, img.W/scale, 1, channels, encodeTile(img, scale, encode))
	if err != nil {
		return nil, err
	}
	return &Latents{C: out.C, H: out.H, W: out.W, Data: out.Pix}, nil
}

// encodeTile is the tile work of an encode of img (scale pixels per latent): the tile's pixels,
// encoded, as a grid of latents.
func encodeTile(img *Image, scale int, encode func(context.Context, *Image) (*Latents, error)) tileWork {
	return func(ctx context.Context, y0, x0, th, tw int) (*Image, error) {
		h, w := scale*th, scale*tw
		l, err := encode(ctx, &Image{C: img.C, H: h, W: w, Pix: cropCHW(img.Pix, img.C, img.H, img.W, scale*y0, scale*x0, h, w)})
		if err != nil {
			return nil, err
		}
		return &Image{C: l.C, H: l.H, W: l.W, Pix: l.Data}, nil
	}
}
