package kit

import (
	"image"
	"image/color"
)

// The checkerboard behind transparent pixels: light and mid grey, as image editors draw it.
var checkerLight, checkerDark = [3]uint32{0xEE, 0xEE, 0xEE}, [3]uint32{0xC8, 0xC8, 0xC8}

// OverChecker composites img over a checkerboard of cell-pixel squares: transparency is visible
// and the result is opaque.
func OverChecker(img image.Image, cell int) *image.NRGBA {
	b := img.Bounds()
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	src, isNRGBA := img.(*image.NRGBA)
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			var c color.NRGBA
			if isNRGBA {
				c = src.NRGBAAt(b.Min.X+x, b.Min.Y+y)
			} else {
				c = color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
			}
			bg := checkerLight
			if (x/cell+y/cell)%2 == 1 {
				bg = checkerDark
			}
			a := uint32(c.A)
			i := out.PixOffset(x, y)
			out.Pix[i+0] = uint8((uint32(c.R)*a + bg[0]*(255-a) + 127) / 255)
			out.Pix[i+1] = uint8((uint32(c.G)*a + bg[1]*(255-a) + 127) / 255)
			out.Pix[i+2] = uint8((uint32(c.B)*a + bg[2]*(255-a) + 127) / 255)
			out.Pix[i+3] = 255
		}
	}
	return out
}

// UpscaleNearest enlarges a small preview k times so its checkerboard cells can be finer than
// one latent.
func UpscaleNearest(img image.Image, k int) *image.NRGBA {
	b := img.Bounds()
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx()*k, b.Dy()*k))
	for y := 0; y < b.Dy()*k; y++ {
		for x := 0; x < b.Dx()*k; x++ {
			out.Set(x, y, img.At(b.Min.X+x/k, b.Min.Y+y/k))
		}
	}
	return out
}
