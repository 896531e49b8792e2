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
	case onlyCropped(b, w, h):
		return imaging.CropCenter(img, w, h)
	}
	return imaging.Fill(img, w, h, imaging.Center, imaging.Lanczos)
}

// FitAt is Fit with the crop moved off the centre by off pixels of img (CropAt places it, inside
// the image): the crop is cut from img, then scaled (Lanczos) to w×h. A crop that ends up
// centred is exactly Fit's.
func FitAt(img *image.NRGBA, w, h int, off image.Point) *image.NRGBA {
	b := img.Bounds()
	r, centred := CropAt(b.Size(), w, h, off)
	if centred || b.Dx() == w && b.Dy() == h {
		return Fit(img, w, h)
	}
	crop := imaging.Crop(img, r.Add(b.Min))
	if r.Dx() == w && r.Dy() == h {
		return crop
	}
	return imaging.Resize(crop, w, h, imaging.Lanczos)
}

// onlyCropped reports whether an image of bounds b fits w×h by cropping alone (at most 31 pixels
// larger on each side).
func onlyCropped(b image.Rectangle, w, h int) bool {
	return w <= b.Dx() && h <= b.Dy() && b.Dx()-w < 32 && b.Dy()-h < 32
}

// CropAt is the part of an image of size size (its pixels, from 0,0) that fitting it to w×h uses:
// the largest rectangle of w×h's aspect (exactly w×h when the image is at most 31 pixels larger
// on each side, as Fit only crops then), centred and moved by off, kept inside the image (off is
// clamped); centred reports whether it is the centred crop after all.
func CropAt(size image.Point, w, h int, off image.Point) (r image.Rectangle, centred bool) {
	cw, ch := size.X, size.Y
	cropW, cropH := cw, ch
	switch {
	case w <= 0 || h <= 0:
	case onlyCropped(image.Rect(0, 0, cw, ch), w, h):
		cropW, cropH = w, h
	case w*ch > h*cw: // the output is wider than the image: its full width
		cropH = max(min(ch, (cw*h+w/2)/w), 1)
	default:
		cropW = max(min(cw, (ch*w+h/2)/h), 1)
	}
	x0, y0 := (cw-cropW)/2, (ch-cropH)/2
	x := min(max(x0+off.X, 0), cw-cropW)
	y := min(max(y0+off.Y, 0), ch-cropH)
	return image.Rect(x, y, x+cropW, y+cropH), x == x0 && y == y0
}

// SizeFollowing is the output size that follows an image of w×h pixels: each side rounded down
// to a multiple of multiple (at least one multiple).
func SizeFollowing(w, h, multiple int) (int, int) {
	return max(w/multiple, 1) * multiple, max(h/multiple, 1) * multiple
}
