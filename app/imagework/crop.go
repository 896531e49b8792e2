package imagework

import (
	"image"
	"math"
)

// MaskBounds is the smallest rectangle holding every pixel m repaints (empty when none).
func MaskBounds(m *image.Gray) image.Rectangle {
	b := m.Bounds()
	r := image.Rectangle{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := m.Pix[m.PixOffset(b.Min.X, y):m.PixOffset(b.Max.X, y)]
		for x, v := range row {
			if v != 0 {
				r = r.Union(image.Rect(b.Min.X+x, y, b.Min.X+x+1, y+1))
			}
		}
	}
	return r
}

// CropRegion is the part of a w×h canvas the "only the masked area" mode works on: the mask's
// bounds grown by pad pixels on every side, then widened or heightened to the aspect ratio
// aspect (width/height) so the crop scales to the working size without distortion, kept inside
// the canvas (shifted, and trimmed only when the canvas is too small).
func CropRegion(m *image.Gray, pad int, aspect float64) image.Rectangle {
	canvas := m.Bounds()
	r := MaskBounds(m)
	if r.Empty() {
		return canvas
	}
	r = image.Rect(r.Min.X-pad, r.Min.Y-pad, r.Max.X+pad, r.Max.Y+pad)
	w, h := float64(r.Dx()), float64(r.Dy())
	if w/h < aspect {
		w = h * aspect
	} else {
		h = w / aspect
	}
	cw, ch := min(int(math.Ceil(w)), canvas.Dx()), min(int(math.Ceil(h)), canvas.Dy())
	cx, cy := (r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2
	x0 := min(max(cx-cw/2, canvas.Min.X), canvas.Max.X-cw)
	y0 := min(max(cy-ch/2, canvas.Min.Y), canvas.Max.Y-ch)
	return image.Rect(x0, y0, x0+cw, y0+ch)
}

// WorkSize is the size the model runs a crop of w×h pixels at: the same aspect ratio holding
// about area pixels, each side a multiple of multiple.
func WorkSize(w, h, area, multiple int) (int, int) {
	s := math.Sqrt(float64(area) / float64(w*h))
	ww := max(int(math.Round(float64(w)*s/float64(multiple))), 1) * multiple
	hh := max(int(math.Round(float64(h)*s/float64(multiple))), 1) * multiple
	return ww, hh
}
