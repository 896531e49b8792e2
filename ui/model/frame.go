package model

import (
	"image"

	"easel/app/compose"
	"easel/app/imagework"
)

// Edges name the generation frame's edges a drag moves, one bit per side (1<<SideLeft…).
type Edges uint8

// The frame's edges; a corner is two of them.
const (
	EdgeLeft   Edges = 1 << SideLeft
	EdgeTop    Edges = 1 << SideTop
	EdgeRight  Edges = 1 << SideRight
	EdgeBottom Edges = 1 << SideBottom
)

// Has reports whether side's edge is among e.
func (e Edges) Has(side int) bool { return e&(1<<side) != 0 }

// The frame on the canvas is what a run makes: the start image with the extension around it when
// the size follows the image, else the crop the chosen size makes of it, placed by CropOffset
// (imagework.Prepare crops there). Its handles change the extension or the crop's place:
//
//   - Moving a crop frame moves the crop over the image (CropOffset, clamped so the crop stays
//     inside; a crop that fills the image along an axis does not move that way). Moving an
//     extended frame shifts the extension from one side to the other (the size stays); a frame
//     without extension on an axis fills the image along it and does not move that way.
//   - Resizing pulls an edge out past the image (that side's extension, the output now following
//     the image) or back to the image's edge; an edge never cuts into the image. The extended
//     side snaps to a multiple of compose.SizeMultiple, so the frame is exactly the output, and
//     stays within compose.MaxSide.

// Moved is the canvas with its frame moved by dx, dy image pixels, the draft's chosen output size
// being w×h: a crop frame moves the crop (clamped inside the image, CropOffset keeping where it
// ends up), an extended frame shifts the extension (clamped so no side's goes below 0).
func (c Canvas) Moved(w, h, dx, dy int) Canvas {
	if c.Start == nil {
		return c
	}
	if !c.Follows() {
		if w <= 0 || h <= 0 {
			return c
		}
		size := c.Start.Image.Image.Rect.Size()
		centred, _ := imagework.CropAt(size, w, h, image.Point{})
		now, _ := imagework.CropAt(size, w, h, c.CropOffset)
		next, _ := imagework.CropAt(size, w, h, now.Min.Sub(centred.Min).Add(image.Pt(dx, dy)))
		c.CropOffset = next.Min.Sub(centred.Min)
		return c
	}
	for _, ax := range [2]struct{ lo, hi, d int }{{SideLeft, SideRight, dx}, {SideTop, SideBottom, dy}} {
		d := min(max(ax.d, -c.Extend[ax.hi]), c.Extend[ax.lo])
		c.Extend[ax.lo] -= d
		c.Extend[ax.hi] += d
	}
	return c
}

// Movable reports whether the frame of a run of the chosen size w×h can move: an extended frame,
// or a crop smaller than the image.
func (c Canvas) Movable(w, h int) bool {
	if c.Follows() {
		return c.Extend != [4]int{}
	}
	f, ok := c.Frame(w, h)
	return ok && (f.Crop.Dx() < f.Canvas.X || f.Crop.Dy() < f.Canvas.Y)
}

// Resized is the canvas with the frame's edges moved by dx (left, right) and dy (top, bottom)
// image pixels, the draft's chosen output size being w×h (it places the centred crop the drag
// starts from when the size does not follow the image).
func (c Canvas) Resized(w, h int, edges Edges, dx, dy int) Canvas {
	f, ok := c.Frame(w, h)
	if !ok {
		return c
	}
	// The frame's edges in image pixels (the image at 0,0).
	l, t := c.Extend[SideLeft], c.Extend[SideTop]
	at := [4]int{f.Crop.Min.X - l, f.Crop.Min.Y - t, f.Crop.Max.X - l, f.Crop.Max.Y - t}
	if c.Follows() { // the whole extended canvas (the run crops its rounding centred)
		at = [4]int{-l, -t, f.Canvas.X - l, f.Canvas.Y - t}
	}
	b := c.Start.Image.Image.Rect
	size := [4]int{b.Dx(), b.Dy(), b.Dx(), b.Dy()}
	delta := [4]int{dx, dy, dx, dy}
	var ext [4]int
	for side := range ext {
		pos := at[side]
		if edges.Has(side) {
			pos += delta[side]
		}
		if side == SideLeft || side == SideTop {
			ext[side] = max(-pos, 0)
		} else {
			ext[side] = max(pos-size[side], 0)
		}
	}
	for side := range ext {
		if edges.Has(side) && ext[side] > 0 {
			other := ext[(side+2)%4]
			ext[side] = snapExtension(size[side], other, ext[side])
		}
	}
	c.Extend = ext
	return c
}

// snapExtension is the extension e of one side of an image side n long, other being the opposite
// side's, moved so that the whole side n+e+other is the nearest multiple of compose.SizeMultiple
// within compose.MaxSide (0 when that leaves no extension).
func snapExtension(n, other, e int) int {
	m := compose.SizeMultiple
	total := (n + other + e + m/2) / m * m
	total = min(total, compose.MaxSide/m*m)
	return max(total-n-other, 0)
}

// MoveFrame moves the generation frame by dx, dy image pixels (Canvas.Moved; width×height is the
// draft's chosen size); false when nothing changed (the frame already at the image's edge, or
// filling it).
func (w *Window) MoveFrame(width, height, dx, dy int) bool {
	return w.setFrame(w.canvas.Moved(width, height, dx, dy))
}

// ResizeFrame moves the frame's edges by dx, dy image pixels (Canvas.Resized; width×height is
// the draft's chosen size); false when nothing changed.
func (w *Window) ResizeFrame(width, height int, edges Edges, dx, dy int) bool {
	return w.setFrame(w.canvas.Resized(width, height, edges, dx, dy))
}

func (w *Window) setFrame(next Canvas) bool {
	if next.Extend == w.canvas.Extend && next.CropOffset == w.canvas.CropOffset {
		return false
	}
	w.canvas.Extend, w.canvas.CropOffset = next.Extend, next.CropOffset
	w.changed(CanvasChanged)
	return true
}
