package imagework

import (
	"fmt"
	"image"
)

// PasteBack is the generated image over the original through the mask: each channel is
// (original·(255 − m) + generated·m) / 255, rounded. Where the mask is 0 the original's bytes are
// kept exactly, where it is 255 the generated ones. All three must have one size.
func PasteBack(original, generated *image.NRGBA, m *image.Gray) (*image.NRGBA, error) {
	ob, gb, mb := original.Bounds(), generated.Bounds(), m.Bounds()
	if ob.Size() != gb.Size() || ob.Size() != mb.Size() {
		return nil, fmt.Errorf("pasting back: the original is %v, the result %v and the mask %v; they must have one size", ob.Size(), gb.Size(), mb.Size())
	}
	w, h := ob.Dx(), ob.Dy()
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		o := original.Pix[original.PixOffset(ob.Min.X, ob.Min.Y+y):]
		g := generated.Pix[generated.PixOffset(gb.Min.X, gb.Min.Y+y):]
		mr := m.Pix[m.PixOffset(mb.Min.X, mb.Min.Y+y):]
		dst := out.Pix[y*out.Stride:]
		for x := range w {
			a := uint32(mr[x])
			for c := range 4 {
				i := 4*x + c
				dst[i] = uint8((uint32(o[i])*(255-a) + uint32(g[i])*a + 127) / 255)
			}
		}
	}
	return out, nil
}
