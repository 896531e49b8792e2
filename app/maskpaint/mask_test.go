package maskpaint

import (
	"image"
	"testing"
)

// painted lists the repaint pixels of m.
func painted(m *Mask) map[image.Point]bool {
	out := map[image.Point]bool{}
	g := m.Image()
	for y := range g.Rect.Dy() {
		for x := range g.Rect.Dx() {
			if g.GrayAt(x, y).Y == Repaint {
				out[image.Pt(x, y)] = true
			} else if v := g.GrayAt(x, y).Y; v != Keep {
				panic(v)
			}
		}
	}
	return out
}

func TestStrokePaintsTheCapsuleBetweenItsEnds(t *testing.T) {
	m := New(40, 20)
	// A horizontal line through pixel row 10's centre, radius 2: rows 8–12 (centres 8.5…12.5 lie
	// within 2 of 10.5), columns 3–20 on the line and rounded caps past its ends.
	changed := m.Stroke(Point{5.5, 10.5}, Point{18.5, 10.5}, 2, false)
	got := painted(m)
	for y := range 20 {
		for x := range 40 {
			dx := 0.0
			if cx := float64(x) + 0.5; cx < 5.5 {
				dx = 5.5 - cx
			} else if cx > 18.5 {
				dx = cx - 18.5
			}
			dy := float64(y) + 0.5 - 10.5
			want := dx*dx+dy*dy <= 4
			if got[image.Pt(x, y)] != want {
				t.Fatalf("pixel %d,%d painted=%v, want %v", x, y, got[image.Pt(x, y)], want)
			}
		}
	}
	if !image.Pt(3, 10).In(changed) || !image.Pt(20, 10).In(changed) || !image.Pt(10, 8).In(changed) || !image.Pt(10, 12).In(changed) {
		t.Errorf("changed rectangle %v misses painted pixels", changed)
	}
	if m.Empty() {
		t.Error("Empty after a stroke")
	}
}

func TestStrokeOffTheMaskIsClipped(t *testing.T) {
	m := New(10, 10)
	r := m.Stroke(Point{-50, -50}, Point{-40, -40}, 3, false)
	if !r.Empty() || !m.Empty() {
		t.Errorf("a stroke outside the mask changed %v", r)
	}
	m.Stroke(Point{-5, 5}, Point{15, 5}, 1, false) // across the whole mask
	if n := len(painted(m)); n != 10*2 {
		t.Errorf("%d pixels painted by a stroke across a 10-wide mask with radius 1, want 20 (two rows)", n)
	}
}

func TestEraserInvertClearAndUndo(t *testing.T) {
	m := New(32, 32)
	m.Begin()
	m.Stroke(Point{4, 16}, Point{16, 16}, 3, false)
	m.Stroke(Point{16, 16}, Point{28, 16}, 3, false)
	m.End()
	afterPaint := m.Clone()
	m.Stroke(Point{16, 10}, Point{16, 22}, 2, true) // erase a vertical bar through the middle
	if painted(m)[image.Pt(16, 16)] || !painted(m)[image.Pt(6, 16)] {
		t.Fatal("the eraser did not clear its path, or cleared beyond it")
	}
	afterErase := m.Clone()
	m.Invert()
	for i, v := range m.Image().Pix {
		if v != 255-afterErase.Pix[i] {
			t.Fatalf("invert: pixel %d is %d, want %d", i, v, 255-afterErase.Pix[i])
		}
	}
	m.Clear()
	if !m.Empty() {
		t.Fatal("Clear left painted pixels")
	}
	// Clear → back to inverted, Invert → back to erased, erase → back to the two-part stroke as one
	// step, the stroke → empty.
	steps := []func(*image.Gray) bool{
		func(g *image.Gray) bool { return g.Pix[0] == 255 },           // inverted: a kept corner became repaint
		func(g *image.Gray) bool { return equal(g, afterErase) },      // the erase
		func(g *image.Gray) bool { return equal(g, afterPaint) },      // the whole two-segment stroke
		func(g *image.Gray) bool { return equal(g, New(32, 32).img) }, // nothing
	}
	for i, ok := range steps {
		if !m.Undo() {
			t.Fatalf("undo %d: nothing to undo", i+1)
		}
		if !ok(m.Image()) {
			t.Fatalf("undo %d did not go back to the expected mask", i+1)
		}
	}
	if m.Undo() || m.CanUndo() {
		t.Error("undo past the first step")
	}
}

func TestUndoKeepsTheLastMaxUndoSteps(t *testing.T) {
	m := New(8, 8)
	for i := range MaxUndo + 5 {
		m.Stroke(Point{float64(i % 8), 0}, Point{float64(i % 8), 0}, 0.5, i%2 == 1)
	}
	n := 0
	for m.Undo() {
		n++
	}
	if n != MaxUndo {
		t.Errorf("%d undo steps, want %d", n, MaxUndo)
	}
}

func TestFromCopiesAndMovesToTheOrigin(t *testing.T) {
	g := image.NewGray(image.Rect(10, 10, 14, 13))
	g.Pix[0] = 200
	m := From(g)
	if w, h := m.Size(); w != 4 || h != 3 || m.Image().Rect.Min != (image.Point{}) || m.Image().Pix[0] != 200 {
		t.Fatalf("From: size %dx%d, rect %v", w, h, m.Image().Rect)
	}
	g.Pix[0] = 0
	if m.Image().Pix[0] != 200 {
		t.Error("From shares the caller's pixels")
	}
}

func equal(a, b *image.Gray) bool {
	if a.Rect != b.Rect {
		return false
	}
	for i := range a.Pix {
		if a.Pix[i] != b.Pix[i] {
			return false
		}
	}
	return true
}
