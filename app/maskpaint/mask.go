package maskpaint

import (
	"image"
	"image/draw"
	"math"
)

// MaxUndo is how many steps back Undo can go. A step is one stroke, an invert or a clear; each
// keeps a copy of the mask (1 MB at 1024², 4 MB at 2048²).
const MaxUndo = 16

// Repaint and Keep are the mask's two painted values.
const (
	Repaint = 255
	Keep    = 0
)

// Mask is a painted mask with its undo history. The zero value is not usable: use New or From.
type Mask struct {
	img  *image.Gray
	undo []*image.Gray // oldest first
	// inStroke is true between Begin and End: the stroke's snapshot is already taken.
	inStroke bool
}

// New is an empty (all keep) mask of w×h pixels.
func New(w, h int) *Mask {
	return &Mask{img: image.NewGray(image.Rect(0, 0, max(w, 1), max(h, 1)))}
}

// From is a mask holding a copy of g, moved to the origin (a restored or loaded mask); undo
// starts empty.
func From(g *image.Gray) *Mask {
	m := New(g.Rect.Dx(), g.Rect.Dy())
	draw.Draw(m.img, m.img.Rect, g, g.Rect.Min, draw.Src)
	return m
}

// Image is the mask itself (not a copy: do not change it; Clone for one to keep).
func (m *Mask) Image() *image.Gray { return m.img }

// Clone is a copy of the mask's pixels.
func (m *Mask) Clone() *image.Gray {
	c := image.NewGray(m.img.Rect)
	copy(c.Pix, m.img.Pix)
	return c
}

// Size is the mask's size in pixels.
func (m *Mask) Size() (w, h int) { return m.img.Rect.Dx(), m.img.Rect.Dy() }

// Empty reports whether nothing is marked for repainting.
func (m *Mask) Empty() bool {
	for _, v := range m.img.Pix {
		if v != Keep {
			return false
		}
	}
	return true
}

// snapshot pushes the current mask onto the undo stack, dropping the oldest past MaxUndo.
func (m *Mask) snapshot() {
	if len(m.undo) == MaxUndo {
		m.undo = append(m.undo[:0], m.undo[1:]...)
	}
	m.undo = append(m.undo, m.Clone())
}

// Begin starts a stroke: everything painted until End is undone as one step.
func (m *Mask) Begin() {
	if !m.inStroke {
		m.snapshot()
		m.inStroke = true
	}
}

// End finishes the stroke Begin started.
func (m *Mask) End() { m.inStroke = false }

// Stroke paints (value Repaint) or erases (value Keep) a line of round dabs of the given radius
// from a to b, in mask pixels, and returns the rectangle it changed (empty when the line misses
// the mask). A stroke outside Begin/End is a step of its own.
func (m *Mask) Stroke(a, b Point, radius float64, erase bool) image.Rectangle {
	if !m.inStroke {
		m.snapshot()
	}
	radius = max(radius, 0.5)
	v := uint8(Repaint)
	if erase {
		v = Keep
	}
	box := image.Rect(
		int(math.Floor(min(a.X, b.X)-radius)), int(math.Floor(min(a.Y, b.Y)-radius)),
		int(math.Ceil(max(a.X, b.X)+radius))+1, int(math.Ceil(max(a.Y, b.Y)+radius))+1,
	).Intersect(m.img.Rect)
	r2 := radius * radius
	for y := box.Min.Y; y < box.Max.Y; y++ {
		row := m.img.Pix[m.img.PixOffset(box.Min.X, y):]
		for x := box.Min.X; x < box.Max.X; x++ {
			// The pixel's centre against the segment a–b.
			if distanceSquared(Point{float64(x) + 0.5, float64(y) + 0.5}, a, b) <= r2 {
				row[x-box.Min.X] = v
			}
		}
	}
	return box
}

// Invert swaps repaint and keep (a grey level g becomes 255 − g).
func (m *Mask) Invert() {
	m.snapshot()
	for i, v := range m.img.Pix {
		m.img.Pix[i] = 255 - v
	}
}

// Clear marks everything keep again.
func (m *Mask) Clear() {
	m.snapshot()
	clear(m.img.Pix)
}

// Undo goes back one step; false when there is none.
func (m *Mask) Undo() bool {
	if len(m.undo) == 0 {
		return false
	}
	last := m.undo[len(m.undo)-1]
	m.undo = m.undo[:len(m.undo)-1]
	m.img = last
	m.inStroke = false
	return true
}

// CanUndo reports whether Undo has a step to go back.
func (m *Mask) CanUndo() bool { return len(m.undo) > 0 }

// Point is a position in mask pixels (the top-left corner of the mask is 0,0; pixel x,y covers
// x…x+1, y…y+1).
type Point struct{ X, Y float64 }

// distanceSquared is the squared distance from p to the segment a–b.
func distanceSquared(p, a, b Point) float64 {
	dx, dy := b.X-a.X, b.Y-a.Y
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = min(max(((p.X-a.X)*dx+(p.Y-a.Y)*dy)/l, 0), 1)
	}
	ex, ey := p.X-(a.X+t*dx), p.Y-(a.Y+t*dy)
	return ex*ex + ey*ey
}

// Coverage is the share of the image marked for repainting, 0…1 (a grey level counts in part).
func (m *Mask) Coverage() float64 {
	var sum uint64
	for _, v := range m.img.Pix {
		sum += uint64(v)
	}
	return float64(sum) / (255 * float64(len(m.img.Pix)))
}
