package upscale

import (
	"context"
	"fmt"
)

// Planes is a channel-first float picture [C, H, W].
type Planes struct {
	C, H, W int
	Data    []float32
}

// Tiling cuts the input into Tile×Tile squares (input pixels; 0: the whole picture in one piece),
// each run with Pad more input pixels on every side (as far as the picture reaches) whose output
// is dropped: Real-ESRGAN's tile and tile_pad.
type Tiling struct {
	Tile, Pad int
}

// DefaultPad is the padding Easel uses around tiles: more than Real-ESRGAN's 10, so the
// difference from an untiled run stays below one level of an 8-bit picture.
const DefaultPad = 16

// Rect is a tile's place in the output picture.
type Rect struct{ X0, Y0, X1, Y1 int }

// Progress hears each finished tile: done of total tiles (an alpha channel adds a second pass).
type Progress func(done, total int)

// tileStarts are the starts of the tiles along a side of n pixels.
func tileStarts(n, tile int) []int {
	if tile <= 0 || tile >= n {
		return []int{0}
	}
	var s []int
	for x := 0; x < n; x += tile {
		s = append(s, x)
	}
	return s
}

// Tiles is the number of tiles an H×W input is cut into.
func (t Tiling) Tiles(H, W int) int { return len(tileStarts(H, t.Tile)) * len(tileStarts(W, t.Tile)) }

// align rounds the tiling to the unshuffle factor u, which every tile's sides must be multiples of.
func (t Tiling) align(u int) Tiling {
	if u <= 1 {
		return t
	}
	if t.Tile > 0 {
		t.Tile = max(u, t.Tile/u*u)
	}
	t.Pad = (t.Pad + u - 1) / u * u
	return t
}

// run passes in (H and W multiples of the unshuffle factor) through the network tile by tile;
// sink receives each tile's output [3, h·s, w·s] (only its unpadded part: r in output pixels, data
// with row stride r.X1-r.X0). Cancelling ctx stops between tiles.
func (m *Model) run(ctx context.Context, in Planes, t Tiling, sink func(r Rect, out []float32), tick func()) error {
	if in.C != 3 || len(in.Data) != 3*in.H*in.W {
		return fmt.Errorf("upscale: input planes %d×%d×%d with %d values, want 3 channels", in.C, in.H, in.W, len(in.Data))
	}
	s, u := m.cfg.Scale, max(1, m.cfg.Unshuffle)
	if in.H%u != 0 || in.W%u != 0 {
		return fmt.Errorf("upscale: input %d×%d is not a multiple of %d", in.W, in.H, u)
	}
	t = t.align(u)
	for _, y0 := range tileStarts(in.H, t.Tile) {
		for _, x0 := range tileStarts(in.W, t.Tile) {
			if ctx != nil {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("upscaling stopped: %w", err)
				}
			}
			y1, x1 := in.H, in.W
			if t.Tile > 0 {
				y1, x1 = min(in.H, y0+t.Tile), min(in.W, x0+t.Tile)
			}
			py0, px0 := max(0, y0-t.Pad), max(0, x0-t.Pad)
			py1, px1 := min(in.H, y1+t.Pad), min(in.W, x1+t.Pad)
			out, err := m.runTile(in, Rect{px0, py0, px1, py1})
			if err != nil {
				return err
			}
			// The unpadded part of the tile's output.
			ow := s * (px1 - px0)
			oh := s * (py1 - py0)
			r := Rect{s * x0, s * y0, s * x1, s * y1}
			rw, rh := r.X1-r.X0, r.Y1-r.Y0
			crop := make([]float32, 3*rw*rh)
			for c := 0; c < 3; c++ {
				for y := 0; y < rh; y++ {
					src := out[(c*oh+s*(y0-py0)+y)*ow+s*(x0-px0):]
					copy(crop[(c*rh+y)*rw:(c*rh+y+1)*rw], src[:rw])
				}
			}
			sink(r, crop)
			if tick != nil {
				tick()
			}
		}
	}
	return nil
}

// runTile runs the network on the input region r and returns its output [3, s·h, s·w] on the host.
func (m *Model) runTile(in Planes, r Rect) ([]float32, error) {
	w, h := r.X1-r.X0, r.Y1-r.Y0
	buf := make([]float32, 3*w*h)
	for c := 0; c < 3; c++ {
		for y := 0; y < h; y++ {
			copy(buf[(c*h+y)*w:(c*h+y+1)*w], in.Data[(c*in.H+r.Y0+y)*in.W+r.X0:][:w])
		}
	}
	x, err := m.be.Upload(buf, 3, h, w)
	if err != nil {
		return nil, err
	}
	defer m.be.Free(x)
	p := &pass{be: m.be}
	out := m.forward(p, x)
	var res []float32
	if p.err == nil {
		res, p.err = m.be.Download(out)
	}
	if _, dry := out.(*dryTensor); !dry {
		m.be.Free(out)
	}
	if p.err != nil {
		return nil, fmt.Errorf("upscaling a %d×%d tile: %w", w, h, p.err)
	}
	return res, nil
}

// Run upscales planes [3, H, W] (values in [0, 1]) and returns the network's output [3, sH, sW]
// before any clamp (the reference cases' output_f32). H and W must be multiples of the unshuffle
// factor (Picture pads them).
func (m *Model) Run(ctx context.Context, in Planes, t Tiling, progress Progress) (Planes, error) {
	s := m.cfg.Scale
	out := Planes{C: 3, H: s * in.H, W: s * in.W}
	if int64(out.H)*int64(out.W) > maxOutputPixels {
		return Planes{}, errTooLarge(out.W, out.H)
	}
	out.Data = make([]float32, 3*out.H*out.W)
	total, done := t.align(max(1, m.cfg.Unshuffle)).Tiles(in.H, in.W), 0
	err := m.run(ctx, in, t, func(r Rect, tile []float32) {
		rw, rh := r.X1-r.X0, r.Y1-r.Y0
		for c := 0; c < 3; c++ {
			for y := 0; y < rh; y++ {
				copy(out.Data[(c*out.H+r.Y0+y)*out.W+r.X0:][:rw], tile[(c*rh+y)*rw:][:rw])
			}
		}
	}, func() {
		done++
		if progress != nil {
			progress(done, total)
		}
	})
	if err != nil {
		return Planes{}, err
	}
	return out, nil
}

// maxOutputPixels bounds a result: 16384² (an 8-bit RGBA picture of 1 GiB).
const maxOutputPixels = 16384 * 16384

func errTooLarge(w, h int) error {
	return fmt.Errorf("the upscaled picture would be %d×%d, larger than Easel writes (16384² pixels); upscale a smaller picture or choose a smaller scale", w, h)
}
