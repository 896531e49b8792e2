package kit

import "image"

// NRGBA is img as NRGBA (nil for none); a finished image already is one.
func NRGBA(img image.Image) *image.NRGBA {
	if img == nil {
		return nil
	}
	if n, ok := img.(*image.NRGBA); ok {
		return n
	}
	b := img.Bounds()
	n := image.NewNRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			n.Set(x, y, img.At(x, y))
		}
	}
	return n
}
