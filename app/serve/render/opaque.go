package render

import (
	"image"
	"image/draw"
)

// Opaque is img with every alpha at 255 and the colour channels unchanged (not composited over
// anything), so a PNG encoder writes it as RGB: what Pillow's convert("RGB") makes of an RGBA
// picture, and what A1111 and ComfyUI answer.
func Opaque(img image.Image) *image.NRGBA {
	b := img.Bounds()
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	if n, ok := img.(*image.NRGBA); ok {
		for y := 0; y < b.Dy(); y++ {
			row := n.Pix[(y+b.Min.Y-n.Rect.Min.Y)*n.Stride+(b.Min.X-n.Rect.Min.X)*4:]
			copy(out.Pix[y*out.Stride:y*out.Stride+4*b.Dx()], row)
		}
	} else {
		draw.Draw(out, out.Rect, img, b.Min, draw.Src)
	}
	for i := 3; i < len(out.Pix); i += 4 {
		out.Pix[i] = 255
	}
	return out
}
