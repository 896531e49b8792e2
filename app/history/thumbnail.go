package history

import (
	"image"
	"image/color"
)

// Thumbnail is img scaled down (box filter, alpha kept) so its long side is at most side pixels;
// a small image is returned as it is.
func Thumbnail(img image.Image, side int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= side && h <= side || w == 0 || h == 0 {
		return img
	}
	tw, th := side, max(1, h*side/w)
	if h > w {
		tw, th = max(1, w*side/h), side
	}
	out := image.NewNRGBA(image.Rect(0, 0, tw, th))
	for ty := range th {
		y0, y1 := b.Min.Y+ty*h/th, b.Min.Y+(ty+1)*h/th
		for tx := range tw {
			x0, x1 := b.Min.X+tx*w/tw, b.Min.X+(tx+1)*w/tw
			var r, g, bl, a, n uint32
			for y := y0; y < max(y1, y0+1); y++ {
				for x := x0; x < max(x1, x0+1); x++ {
					c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
					r += uint32(c.R)
					g += uint32(c.G)
					bl += uint32(c.B)
					a += uint32(c.A)
					n++
				}
			}
			out.SetNRGBA(tx, ty, color.NRGBA{uint8(r / n), uint8(g / n), uint8(bl / n), uint8(a / n)})
		}
	}
	return out
}
