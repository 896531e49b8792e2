package upscale

import (
	"context"
	"image"
	"image/draw"
	"math"
)

// Options are how a picture is upscaled.
type Options struct {
	Tiling   Tiling
	Progress Progress // each finished tile, or nil
}

// Picture upscales img by the network's scale the way Real-ESRGAN does: RGB ÷ 255 through the
// network, clamp to [0, 1], ×255, round half to even; a picture with any alpha below 255 runs its
// alpha a second time as a grey picture (the value in R, G and B) and keeps the result's BT.601
// grey (0.299·R + 0.587·G + 0.114·B of the clamped output). Sides that are not multiples of the
// unshuffle factor (×2 and ×1 RRDBNets) are padded by reflection and the padding cut from the
// result. Cancelling ctx stops between tiles.
func (m *Model) Picture(ctx context.Context, img image.Image, opt Options) (*image.NRGBA, error) {
	src := toNRGBA(img)
	W, H := src.Rect.Dx(), src.Rect.Dy()
	s, u := m.cfg.Scale, max(1, m.cfg.Unshuffle)
	if int64(s*W)*int64(s*H) > maxOutputPixels {
		return nil, errTooLarge(s*W, s*H)
	}
	pw, ph := (W+u-1)/u*u, (H+u-1)/u*u
	alpha := false
	for i := 3; i < len(src.Pix); i += 4 {
		if src.Pix[i] != 255 {
			alpha = true
			break
		}
	}
	planes := func(channel int) Planes {
		p := Planes{C: 3, H: ph, W: pw, Data: make([]float32, 3*ph*pw)}
		for y := 0; y < ph; y++ {
			sy := reflect(y, H)
			for x := 0; x < pw; x++ {
				px := src.Pix[sy*src.Stride+4*reflect(x, W):]
				for c := 0; c < 3; c++ {
					v := px[c]
					if channel >= 0 {
						v = px[channel]
					}
					p.Data[(c*ph+y)*pw+x] = float32(v) / 255
				}
			}
		}
		return p
	}
	out := image.NewNRGBA(image.Rect(0, 0, s*W, s*H))
	t := opt.Tiling
	total := t.align(u).Tiles(ph, pw)
	if alpha {
		total *= 2
	}
	done := 0
	tick := func() {
		done++
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	write := func(alphaPass bool) func(r Rect, tile []float32) {
		return func(r Rect, tile []float32) {
			rw, rh := r.X1-r.X0, r.Y1-r.Y0
			for y := 0; y < rh && r.Y0+y < s*H; y++ {
				row := out.Pix[(r.Y0+y)*out.Stride:]
				for x := 0; x < rw && r.X0+x < s*W; x++ {
					i := y*rw + x
					r8, g8, b8 := clamp01(tile[i]), clamp01(tile[rh*rw+i]), clamp01(tile[2*rh*rw+i])
					px := row[4*(r.X0+x):]
					if alphaPass {
						px[3] = to8(0.299*r8 + 0.587*g8 + 0.114*b8)
						continue
					}
					px[0], px[1], px[2] = to8(r8), to8(g8), to8(b8)
					if !alpha {
						px[3] = 255
					}
				}
			}
		}
	}
	if err := m.run(ctx, planes(-1), t, write(false), tick); err != nil {
		return nil, err
	}
	if alpha {
		if err := m.run(ctx, planes(3), t, write(true), tick); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func clamp01(v float32) float64 { return math.Min(1, math.Max(0, float64(v))) }

// to8 is round(v·255), half to even (numpy's round, which the reference uses).
func to8(v float64) uint8 { return uint8(math.RoundToEven(v * 255)) }

// reflect is PyTorch's reflect padding index for i past the end of a side of n pixels.
func reflect(i, n int) int {
	if i < n {
		return i
	}
	if n == 1 {
		return 0
	}
	return max(0, 2*(n-1)-i)
}

func toNRGBA(img image.Image) *image.NRGBA {
	if n, ok := img.(*image.NRGBA); ok && n.Rect.Min == (image.Point{}) {
		return n
	}
	b := img.Bounds()
	n := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(n, n.Rect, img, b.Min, draw.Src)
	return n
}
