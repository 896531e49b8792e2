package imagework

import (
	"image"

	"github.com/disintegration/imaging"
)

// Fit is img at exactly w×h, cover-cropped: scaled (Lanczos) so it covers w×h and cropped
// around its centre. An image at most 31 pixels larger on each side (the size-follows-the-image
// case, a side rounded down to a multiple of 32) is only cropped, so its pixels stay exact.
func Fit(img *image.NRGBA, w, h int) *image.NRGBA {
	b := img.Bounds()
	switch {
	case b.Dx() == w && b.Dy() == h:
		return imaging.Clone(img) // a copy at the origin
	case w <= b.Dx() && h <= b.Dy() && b.Dx()-w < 32 && b.Dy()-h < 32:
		return imaging.CropCenter(img, w, h)
	}
	return imaging.Fill(img, w, h, imaging.Center, imaging.Lanczos)
}

// SizeFollowing is the output size that follows an image of w×h pixels: each side rounded down
// to a multiple of multiple (at least one multiple).
func SizeFollowing(w, h, multiple int) (int, int) {
	return max(w/multiple, 1) * multiple, max(h/multiple, 1) * multiple
}
