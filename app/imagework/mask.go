package imagework

import (
	"image"
	"image/color"
	"image/draw"

	"github.com/disintegration/imaging"
)

// MaskFromImage reads a mask picture as the pipeline takes it: white repaints, black keeps, a
// grey level is a partial strength. Colours count by their luminance; a transparent pixel keeps
// (it counts as black), so a brush layer painted on a transparent canvas is a mask as it is.
func MaskFromImage(img image.Image) *image.Gray {
	b := img.Bounds()
	out := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Rect, image.NewUniform(color.Black), image.Point{}, draw.Src)
	draw.Draw(out, out.Rect, img, b.Min, draw.Over)
	return out
}

// ScaleMask is m scaled to w×h (bilinear; a mask painted for another size of the same picture).
func ScaleMask(m *image.Gray, w, h int) *image.Gray {
	if b := m.Bounds(); b.Dx() == w && b.Dy() == h {
		return cloneGray(m)
	}
	return grayOf(imaging.Resize(m, w, h, imaging.Linear))
}

// FitMask is m cover-cropped to w×h exactly as Fit crops the image it belongs to.
func FitMask(m *image.Gray, w, h int) *image.Gray {
	b := m.Bounds()
	switch {
	case b.Dx() == w && b.Dy() == h:
		return cloneGray(m)
	case onlyCropped(b, w, h):
		return grayOf(imaging.CropCenter(m, w, h))
	}
	return grayOf(imaging.Fill(m, w, h, imaging.Center, imaging.Linear))
}

// FitMaskAt is FitMask with the crop moved off the centre by off pixels of m, as FitAt moves
// the image's (scaled Linear; a crop that ends up centred is exactly FitMask's).
func FitMaskAt(m *image.Gray, w, h int, off image.Point) *image.Gray {
	b := m.Bounds()
	r, centred := CropAt(b.Size(), w, h, off)
	if centred || b.Dx() == w && b.Dy() == h {
		return FitMask(m, w, h)
	}
	crop := grayOf(imaging.Crop(m, r.Add(b.Min)))
	if r.Dx() == w && r.Dy() == h {
		return crop
	}
	return grayOf(imaging.Resize(crop, w, h, imaging.Linear))
}

// Empty reports whether m repaints nothing (black everywhere).
func Empty(m *image.Gray) bool {
	b := m.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for _, v := range m.Pix[m.PixOffset(b.Min.X, y):m.PixOffset(b.Max.X, y)] {
			if v != 0 {
				return false
			}
		}
	}
	return true
}

// Grow dilates m by px pixels: every pixel takes the largest value within px pixels
// horizontally and vertically (a square structuring element, as a separable max filter), so a
// thin brush stroke covers the latent cells it crosses and the seam moves off the object's edge.
func Grow(m *image.Gray, px int) *image.Gray {
	out := cloneGray(m)
	if px <= 0 {
		return out
	}
	w, h := out.Rect.Dx(), out.Rect.Dy()
	tmp := make([]uint8, w*h)
	for y := range h {
		row := out.Pix[y*out.Stride : y*out.Stride+w]
		for x := range w {
			var v uint8
			for k := max(x-px, 0); k <= min(x+px, w-1); k++ {
				v = max(v, row[k])
			}
			tmp[y*w+x] = v
		}
	}
	for x := range w {
		for y := range h {
			var v uint8
			for k := max(y-px, 0); k <= min(y+px, h-1); k++ {
				v = max(v, tmp[k*w+x])
			}
			out.Pix[y*out.Stride+x] = v
		}
	}
	return out
}

// Feather blurs m with a Gaussian of standard deviation px pixels (A1111's and diffusers' mask
// blur), so the repainted area fades into the kept one; 0 leaves it as it is.
func Feather(m *image.Gray, px float64) *image.Gray {
	if px <= 0 {
		return cloneGray(m)
	}
	return grayOf(imaging.Blur(m, px))
}

// Invert is the mask with repaint and keep swapped.
func Invert(m *image.Gray) *image.Gray {
	out := cloneGray(m)
	for i, v := range out.Pix {
		out.Pix[i] = 255 - v
	}
	return out
}

// cloneGray is a copy of m at the origin.
func cloneGray(m *image.Gray) *image.Gray {
	b := m.Bounds()
	out := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := range b.Dy() {
		copy(out.Pix[y*out.Stride:], m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):m.PixOffset(b.Max.X, b.Min.Y+y)])
	}
	return out
}

// grayOf is the red channel of a grey picture imaging produced.
func grayOf(img *image.NRGBA) *image.Gray {
	b := img.Bounds()
	out := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := range b.Dy() {
		for x := range b.Dx() {
			out.Pix[y*out.Stride+x] = img.Pix[img.PixOffset(b.Min.X+x, b.Min.Y+y)]
		}
	}
	return out
}
