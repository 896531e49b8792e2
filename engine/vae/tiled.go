package vae

import (
	"context"
	"fmt"
)

// Tiling is how DecodeTiled and EncodeTiled split a latent grid: square-ish tiles of at most Tile
// latents per side that overlap their neighbours by at least Overlap latents. Along each axis it
// takes the fewest tiles that allow this, shrinks them to the smallest size that still covers the
// axis, and spreads them evenly. Overlaps are cross-faded linearly, in pixel space for a decode
// and in latent space for an encode. Peak activation memory follows the tile size, not the image
// size (docs/BENCHMARKS.md, "VAE").
type Tiling struct {
	Tile, Overlap int
}

// DefaultTiling is at most 32 latents (512 pixels) per tile side with at least 8 latents (128
// pixels) of overlap: a 2048² image is 5×5 tiles of 32², a 1024² image 3×3 tiles of 27², about
// 1.6× the untiled work. With the published decoder a 32² tile peaks at 0.8 GB of activations.
var DefaultTiling = Tiling{Tile: 32, Overlap: 8}

func (t Tiling) check() error {
	if t.Tile < 1 || t.Overlap < 0 || t.Overlap >= t.Tile {
		return fmt.Errorf("vae tiling: tile %d with overlap %d; want tile ≥ 1 and 0 ≤ overlap < tile", t.Tile, t.Overlap)
	}
	return nil
}

// spans lays tiles over n latents: their first latents and their common size.
func (t Tiling) spans(n int) (starts []int, size int) {
	if n <= t.Tile {
		return []int{0}, n
	}
	k := ceilDiv(n-t.Overlap, t.Tile-t.Overlap) // fewest tiles: k·Tile − (k−1)·Overlap ≥ n
	size = ceilDiv(n+(k-1)*t.Overlap, k)        // smallest tile that still overlaps enough
	for i := 0; i < k; i++ {
		starts = append(starts, i*(n-size)/(k-1)) // even spacing ≤ size − Overlap
	}
	return starts, size
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// DecodeTiled is Decode for grids of any size with bounded memory: each tile of latents is decoded
// on its own (its mid-block attention sees only the tile) and the tiles are blended where they
// overlap. A grid that fits in one tile decodes exactly as Decode.
func (m *Model) DecodeTiled(ctx context.Context, zn *Latents, t Tiling) (*Image, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	z, err := m.Denormalize(zn)
	if err != nil {
		return nil, err
	}
	out, err := blendTiles(ctx, z, t, m.cfg.Scale(), m.cfg.OutChannels, m.decodeRaw)
	if err != nil {
		return nil, err
	}
	for i, v := range out.Pix {
		out.Pix[i] = min(max(v, -1), 1)
	}
	return out, nil
}

// blendTiles decodes z tile by tile with decode (latents → image at scale× the size) and returns
// the weighted average of the tiles.
func blendTiles(ctx context.Context, z *Latents, t Tiling, scale, channels int, decode func(context.Context, *Latents) (*Image, error)) (*Image, error) {
	return blendGrid(ctx, t, z.H, z.W, scale, channels, decodeTile(z, decode))
}

// decodeTile is the tile work of a decode of z: the tile's latents, decoded.
func decodeTile(z *Latents, decode func(context.Context, *Latents) (*Image, error)) tileWork {
	return func(ctx context.Context, y0, x0, th, tw int) (*Image, error) {
		return decode(ctx, &Latents{C: z.C, H: th, W: tw, Data: cropCHW(z.Data, z.C, z.H, z.W, y0, x0, th, tw)})
	}
}

// tileWork makes one tile's output from the tile of a latent grid at latent (y0, x0), th×tw
// latents: channel planes of per·th × per·tw values (per output values per latent and side).
type tileWork func(ctx context.Context, y0, x0, th, tw int) (*Image, error)

// blendGrid runs work over the tiles of an h×w latent grid and returns the weighted average of
// their outputs, a channels × per·h × per·w grid: each tile weighted by blendRamp's linear
// cross-fades over its overlaps, divided by the weights' sum.
func blendGrid(ctx context.Context, t Tiling, h, w, per, channels int, work tileWork) (*Image, error) {
	ys, th := t.spans(h)
	xs, tw := t.spans(w)
	out := &Image{C: channels, H: per * h, W: per * w}
	out.Pix = make([]float32, out.C*out.H*out.W)
	weightSum := make([]float32, out.H*out.W)
	err := eachTile(ctx, t, h, w, work, func(tile *Image, iy, ix int) error {
		if tile.C != channels || tile.H != per*th || tile.W != per*tw || len(tile.Pix) != channels*per*th*per*tw {
			return fmt.Errorf("tile at latent (%d, %d) of %d×%d gave %d×%d×%d, want %d×%d×%d", ys[iy], xs[ix], h, w, tile.C, tile.H, tile.W, channels, per*th, per*tw)
		}
		accumulate(out, weightSum, tile, per*ys[iy], per*xs[ix], blendRamp(ys, iy, th, per), blendRamp(xs, ix, tw, per))
		return nil
	})
	if err != nil {
		return nil, err
	}
	plane := out.H * out.W
	for i := range out.Pix {
		out.Pix[i] /= weightSum[i%plane]
	}
	return out, nil
}

// eachTile runs work over the tiles of an h×w latent grid in order (rows of tiles, top to bottom)
// and hands each output with its row and column index to use (nil: the work only, as a plan's dry
// run does: the blend touches only host memory, which a plan does not count).
func eachTile(ctx context.Context, t Tiling, h, w int, work tileWork, use func(tile *Image, iy, ix int) error) error {
	ys, th := t.spans(h)
	xs, tw := t.spans(w)
	for iy, y0 := range ys {
		for ix, x0 := range xs {
			tile, err := work(ctx, y0, x0, th, tw)
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

// cropCHW copies the h×w window at (y0, x0) of every channel of a c×H×W grid.
func cropCHW(data []float32, c, H, W, y0, x0, h, w int) []float32 {
	out := make([]float32, c*h*w)
	for ch := 0; ch < c; ch++ {
		for y := 0; y < h; y++ {
			src := data[(ch*H+y0+y)*W+x0:]
			copy(out[(ch*h+y)*w:(ch*h+y+1)*w], src[:w])
		}
	}
	return out
}

// blendRamp is the per-pixel weight along one axis of tile i (size latents, starting at
// starts[i]; scale pixels per latent): 1 inside, rising linearly across the overlap with the
// previous tile and falling across the overlap with the next, so that two neighbours' weights sum
// to 1 over their overlap. Image edges get no ramp. Where a tile overlaps more than one tile on
// the same side the weights do not sum to 1; blendTiles divides by their sum anyway.
func blendRamp(starts []int, i, size, scale int) []float32 {
	w := make([]float32, size*scale)
	lo, hi := 0, 0
	if i > 0 {
		lo = (starts[i-1] + size - starts[i]) * scale
	}
	if i+1 < len(starts) {
		hi = (starts[i] + size - starts[i+1]) * scale
	}
	for p := range w {
		v := float32(1)
		if lo > 0 {
			v = min(v, (float32(p)+0.5)/float32(lo))
		}
		if hi > 0 {
			v = min(v, (float32(len(w)-1-p)+0.5)/float32(hi))
		}
		w[p] = v
	}
	return w
}

// accumulate adds the weighted tile into out at pixel (py, px) and its weights into weightSum.
func accumulate(out *Image, weightSum []float32, tile *Image, py, px int, wy, wx []float32) {
	for y := 0; y < tile.H; y++ {
		row := weightSum[(py+y)*out.W+px:]
		for x := 0; x < tile.W; x++ {
			row[x] += wy[y] * wx[x]
		}
	}
	for c := 0; c < tile.C; c++ {
		for y := 0; y < tile.H; y++ {
			dst := out.Pix[(c*out.H+py+y)*out.W+px:]
			src := tile.Pix[(c*tile.H+y)*tile.W:]
			for x := 0; x < tile.W; x++ {
				dst[x] += wy[y] * wx[x] * src[x]
			}
		}
	}
}
