package imageio

import (
	"image"
	"image/color"
	"image/draw"
)

// toNRGBA converts any decoded image to packed 8-bit non-premultiplied RGBA with origin (0, 0).
// 16-bit samples keep their high byte; premultiplied sources are unpremultiplied; grayscale is
// replicated to R, G and B; palettes are looked up with their transparency.
func toNRGBA(src image.Image) *image.NRGBA {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	switch s := src.(type) {
	case *image.NRGBA:
		for y := 0; y < h; y++ {
			copy(dst.Pix[y*dst.Stride:(y+1)*dst.Stride], s.Pix[s.PixOffset(b.Min.X, b.Min.Y+y):])
		}
	case *image.NRGBA64:
		for y := 0; y < h; y++ {
			in := s.Pix[s.PixOffset(b.Min.X, b.Min.Y+y):]
			out := dst.Pix[y*dst.Stride : (y+1)*dst.Stride]
			for i := range out {
				out[i] = in[2*i] // big-endian: the high byte comes first
			}
		}
	case *image.Gray:
		for y := 0; y < h; y++ {
			in := s.Pix[s.PixOffset(b.Min.X, b.Min.Y+y):]
			out := dst.Pix[y*dst.Stride:]
			for x := 0; x < w; x++ {
				v := in[x]
				out[4*x], out[4*x+1], out[4*x+2], out[4*x+3] = v, v, v, 255
			}
		}
	case *image.Gray16:
		for y := 0; y < h; y++ {
			in := s.Pix[s.PixOffset(b.Min.X, b.Min.Y+y):]
			out := dst.Pix[y*dst.Stride:]
			for x := 0; x < w; x++ {
				v := in[2*x]
				out[4*x], out[4*x+1], out[4*x+2], out[4*x+3] = v, v, v, 255
			}
		}
	case *image.Paletted:
		palette := make([]color.NRGBA, 256)
		for i := range palette {
			palette[i] = color.NRGBA{0, 0, 0, 255} // out-of-palette indices: opaque black, as Go draws them
			if i < len(s.Palette) {
				palette[i] = color.NRGBAModel.Convert(s.Palette[i]).(color.NRGBA)
			}
		}
		for y := 0; y < h; y++ {
			in := s.Pix[s.PixOffset(b.Min.X, b.Min.Y+y):]
			out := dst.Pix[y*dst.Stride:]
			for x := 0; x < w; x++ {
				c := palette[in[x]]
				out[4*x], out[4*x+1], out[4*x+2], out[4*x+3] = c.R, c.G, c.B, c.A
			}
		}
	case *image.YCbCr, *image.CMYK:
		// Always opaque: premultiplied and straight RGBA coincide, and draw has fast paths for them.
		opaque := &image.RGBA{Pix: dst.Pix, Stride: dst.Stride, Rect: dst.Rect}
		draw.Draw(opaque, opaque.Rect, src, b.Min, draw.Src)
	case *image.RGBA: // 8-bit premultiplied (PNG truecolour without alpha, TIFF associated alpha)
		for y := 0; y < h; y++ {
			in := s.Pix[s.PixOffset(b.Min.X, b.Min.Y+y):]
			out := dst.Pix[y*dst.Stride:]
			for x := 0; x < w; x++ {
				p := in[4*x : 4*x+4 : 4*x+4]
				out[4*x], out[4*x+1], out[4*x+2] = unpremultiply(uint32(p[0])*0x101, uint32(p[1])*0x101, uint32(p[2])*0x101, uint32(p[3])*0x101)
				out[4*x+3] = p[3]
			}
		}
	case *image.RGBA64: // 16-bit premultiplied, big-endian (16-bit PNG truecolour without alpha)
		for y := 0; y < h; y++ {
			in := s.Pix[s.PixOffset(b.Min.X, b.Min.Y+y):]
			out := dst.Pix[y*dst.Stride:]
			for x := 0; x < w; x++ {
				p := in[8*x : 8*x+8 : 8*x+8]
				u16 := func(i int) uint32 { return uint32(p[i])<<8 | uint32(p[i+1]) }
				out[4*x], out[4*x+1], out[4*x+2] = unpremultiply(u16(0), u16(2), u16(4), u16(6))
				out[4*x+3] = p[6]
			}
		}
	default:
		// Everything else (NYCbCrA, NRGBA64 sub-types, …): through 16-bit premultiplied colour.
		for y := 0; y < h; y++ {
			out := dst.Pix[y*dst.Stride:]
			for x := 0; x < w; x++ {
				r, g, bl, a := src.At(b.Min.X+x, b.Min.Y+y).RGBA()
				out[4*x], out[4*x+1], out[4*x+2] = unpremultiply(r, g, bl, a)
				out[4*x+3] = uint8(a >> 8)
			}
		}
	}
	return dst
}

// unpremultiply turns 16-bit premultiplied colour into straight 8-bit colour (high byte), as
// color.NRGBAModel does.
func unpremultiply(r, g, b, a uint32) (uint8, uint8, uint8) {
	if a != 0 && a != 0xffff {
		r, g, b = r*0xffff/a, g*0xffff/a, b*0xffff/a
	}
	return uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)
}
