package serve

import (
	"fmt"
	"image"
	"image/draw"

	"easel/app/compose"
	"easel/app/imagework"
)

// renderSide is the smallest side the model makes that covers v: v rounded up to a multiple of
// 32. A request's width × height that is not such a size is rendered at the covering size and
// centre-cropped, so the image is exactly what was asked for.
func renderSide(v int) int {
	return (v + compose.SizeMultiple - 1) / compose.SizeMultiple * compose.SizeMultiple
}

// exactSize is how a request's size is made: rendered at Render, delivered at Want (the centre
// of the render). Zero when the size is the render's own.
type exactSize struct {
	Want, Render image.Point
}

// crops reports whether the render is cropped.
func (e exactSize) crops() bool { return e.Want != e.Render && e.Want != (image.Point{}) }

// offset is where the delivered image sits in the render.
func (e exactSize) offset() image.Point {
	return image.Pt((e.Render.X-e.Want.X)/2, (e.Render.Y-e.Want.Y)/2)
}

// warning says how the size was made.
func (e exactSize) warning() string {
	return fmt.Sprintf("%d×%d is not a size the model makes (sides in multiples of %d): it was rendered at %d×%d, the smallest size that covers it, and centre-cropped to %d×%d",
		e.Want.X, e.Want.Y, compose.SizeMultiple, e.Render.X, e.Render.Y, e.Want.X, e.Want.Y)
}

// crop is the delivered image cut from a render.
func (e exactSize) crop(img *image.NRGBA) *image.NRGBA {
	if !e.crops() || img.Rect.Dx() != e.Render.X || img.Rect.Dy() != e.Render.Y {
		return img
	}
	o := img.Rect.Min.Add(e.offset())
	out := image.NewNRGBA(image.Rect(0, 0, e.Want.X, e.Want.Y))
	draw.Draw(out, out.Rect, img, o, draw.Src)
	return out
}

// start fits a start image (and its mask, the same way) to the delivered size, as A1111 resizes
// an init image to width × height, then places it at the centre of the render with its edge
// pixels repeated outward; the mask keeps the added border (0), which the crop removes again. So
// the delivered image lines up with the start image pixel for pixel.
func (e exactSize) start(st *compose.Start) {
	if !e.crops() || st == nil {
		return
	}
	st.Image = padEdges(imagework.Fit(st.Image, e.Want.X, e.Want.Y), e.Render, e.offset())
	if st.Mask != nil {
		m := imagework.FitMask(st.Mask, e.Want.X, e.Want.Y)
		pm := image.NewGray(image.Rect(0, 0, e.Render.X, e.Render.Y))
		draw.Draw(pm, m.Rect.Add(e.offset()), m, m.Rect.Min, draw.Src)
		st.Mask = pm
	}
}

// padEdges places img at off in a canvas of size, repeating its edge pixels into the border.
func padEdges(img *image.NRGBA, size, off image.Point) *image.NRGBA {
	out := image.NewNRGBA(image.Rect(0, 0, size.X, size.Y))
	b := img.Rect
	for y := 0; y < size.Y; y++ {
		sy := min(max(y-off.Y, 0), b.Dy()-1) + b.Min.Y
		for x := 0; x < size.X; x++ {
			sx := min(max(x-off.X, 0), b.Dx()-1) + b.Min.X
			i, j := out.PixOffset(x, y), img.PixOffset(sx, sy)
			copy(out.Pix[i:i+4], img.Pix[j:j+4])
		}
	}
	return out
}
