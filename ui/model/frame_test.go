package model

import (
	"image"
	"testing"

	"easel/app/compose"
	"easel/app/imagework"
)

// startWith is a window with a w×h start image extended by ext.
func startWith(w, h int, ext [4]int) *Window {
	win := New(compose.Draft{})
	win.SetStart(condition(w, h))
	win.SetExtend(ext)
	return win
}

// TestResizeFrameExtendsEachSide: pulling each edge out extends that side, snapped so the
// extended side is a multiple of 32 (the frame is exactly the output Prepare makes); pushing it
// back into the image stops at the image's edge.
func TestResizeFrameExtendsEachSide(t *testing.T) {
	cases := []struct {
		name   string
		edges  Edges
		dx, dy int
		want   [4]int
	}{
		// 300×200: the width snaps to 320, 352…; the height to 224, 256….
		{"left out", EdgeLeft, -40, 0, [4]int{52, 0, 0, 0}},    // 340 → 352
		{"top out", EdgeTop, 0, -20, [4]int{0, 24, 0, 0}},      // 220 → 224
		{"right out", EdgeRight, 30, 0, [4]int{0, 0, 20, 0}},   // 330 → 320
		{"bottom out", EdgeBottom, 0, 70, [4]int{0, 0, 0, 56}}, // 270 → 256
		{"corner out", EdgeRight | EdgeBottom, 100, 100, [4]int{0, 0, 116, 88}},
		{"a little out is the image's edge", EdgeRight, 3, 0, [4]int{}}, // 303 → 288 < 300
		{"inward stops at the image", EdgeLeft | EdgeTop, 50, 50, [4]int{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := startWith(300, 200, [4]int{})
			w.SetFollowImage(true)
			changed := w.ResizeFrame(1024, 1024, tc.edges, tc.dx, tc.dy)
			c := w.Canvas()
			if c.Extend != tc.want || changed != (tc.want != [4]int{}) {
				t.Fatalf("extension %v (changed %v), want %v", c.Extend, changed, tc.want)
			}
			f, _ := c.Frame(1024, 1024)
			if tc.want != [4]int{} && (f.Width != f.Canvas.X && tc.edges&(EdgeLeft|EdgeRight) != 0 || f.Height != f.Canvas.Y && tc.edges&(EdgeTop|EdgeBottom) != 0) {
				t.Errorf("the snapped side is not the output's: canvas %v, output %d×%d", f.Canvas, f.Width, f.Height)
			}
			o := imagework.Options{Extend: imagework.Margins{Left: c.Extend[0], Top: c.Extend[1], Right: c.Extend[2], Bottom: c.Extend[3]}}
			p, err := imagework.Prepare(c.Start.Image.Image, o)
			if err != nil {
				t.Fatal(err)
			}
			if p.Width != f.Width || p.Height != f.Height {
				t.Errorf("Prepare makes %d×%d, the frame says %d×%d", p.Width, p.Height, f.Width, f.Height)
			}
		})
	}
}

// TestResizeFrameKeepsTheOtherSidesAndShrinks: an edge of an extended canvas moves on its own,
// back in to a smaller multiple or to the image's edge, the other sides kept.
func TestResizeFrameKeepsTheOtherSidesAndShrinks(t *testing.T) {
	w := startWith(256, 256, [4]int{64, 32, 64, 0})
	if !w.ResizeFrame(512, 512, EdgeRight, -40, 0) { // 384 - 40 = 344 → 352
		t.Fatal("the drag changed nothing")
	}
	if got := w.Canvas().Extend; got != [4]int{64, 32, 32, 0} {
		t.Fatalf("extension %v, want [64 32 32 0]", got)
	}
	w.ResizeFrame(512, 512, EdgeLeft|EdgeTop, 200, 200)
	if got := w.Canvas().Extend; got != [4]int{0, 0, 32, 0} {
		t.Fatalf("pushed into the image: extension %v, want [0 0 32 0]", got)
	}
	w.ResizeFrame(512, 512, EdgeRight, -32, 0)
	if c := w.Canvas(); c.Extend != [4]int{} || c.Follows() {
		t.Errorf("with no extension left the frame is the chosen size's crop again: %+v", c.Extend)
	}
}

// TestResizeFrameClampsToTheLargestSide: no drag makes a side past compose.MaxSide.
func TestResizeFrameClampsToTheLargestSide(t *testing.T) {
	w := startWith(1000, 600, [4]int{0, 0, 0, 0})
	w.ResizeFrame(1024, 1024, EdgeLeft|EdgeBottom, -9000, 9000)
	c := w.Canvas()
	cw, ch := c.Extended()
	if cw != compose.MaxSide || ch != compose.MaxSide {
		t.Fatalf("extended to %d×%d, want the largest side %d both ways", cw, ch, compose.MaxSide)
	}
	if c.Extend[SideRight] != 0 || c.Extend[SideTop] != 0 {
		t.Errorf("the sides not dragged grew: %v", c.Extend)
	}
	big := startWith(4100, 100, [4]int{})
	if big.ResizeFrame(1024, 1024, EdgeRight, 500, 0) {
		t.Errorf("an image already past the largest side was extended: %v", big.Canvas().Extend)
	}
}

// TestResizeFrameFromTheCrop: when the size does not follow the image the frame is the centred
// cover crop; an edge pulled past the image extends that side (the size follows from then on), an
// edge moved inside it changes nothing (the crop's size is the chosen size's).
func TestResizeFrameFromTheCrop(t *testing.T) {
	w := startWith(400, 200, [4]int{})
	f, _ := w.Canvas().Frame(512, 512) // the crop: 200×200 at x 100
	if f.Crop.Min.X != 100 || f.Crop.Dx() != 200 {
		t.Fatalf("crop %v", f.Crop)
	}
	if w.ResizeFrame(512, 512, EdgeRight, 80, 0) || w.ResizeFrame(512, 512, EdgeLeft, -80, 0) {
		t.Fatalf("an edge moved inside the image changed the canvas: %v", w.Canvas().Extend)
	}
	if _, ok := w.Canvas().Frame(0, 0); ok || w.ResizeFrame(0, 0, EdgeRight, 160, 0) {
		t.Error("without a chosen size the crop has a frame, or its handle acted")
	}
	// The right edge from x 300 to 460: 60 past the image, 460 → 448 (a multiple of 32).
	if !w.ResizeFrame(512, 512, EdgeRight, 160, 0) {
		t.Fatal("pulling the crop's edge past the image changed nothing")
	}
	c := w.Canvas()
	if c.Extend != [4]int{0, 0, 48, 0} || !c.Follows() {
		t.Fatalf("extension %v (follows %v), want [0 0 48 0] following the image", c.Extend, c.Follows())
	}
	if f, _ := c.Frame(512, 512); f.Width != 448 || f.Height != 192 {
		t.Errorf("output %d×%d, want 448×192", f.Width, f.Height)
	}
}

// TestMoveFrameShiftsTheExtension: the frame's body moves the extension from one side to the
// other, the output size unchanged, clamped at the image's edges.
func TestMoveFrameShiftsTheExtension(t *testing.T) {
	w := startWith(256, 256, [4]int{0, 32, 64, 32})
	before, _ := w.Canvas().Frame(512, 512)
	if !w.MoveFrame(512, 512, 40, -10) {
		t.Fatal("the move changed nothing")
	}
	if got := w.Canvas().Extend; got != [4]int{0, 42, 64, 22} {
		// Right would cut into the image (no extension on the left), so x stays; up by 10.
		t.Fatalf("extension %v, want [0 42 64 22]", got)
	}
	w.MoveFrame(512, 512, -100, 0) // left by up to the right side's 64
	if got := w.Canvas().Extend; got != [4]int{64, 42, 0, 22} {
		t.Fatalf("extension %v, want [64 42 0 22]", got)
	}
	after, _ := w.Canvas().Frame(512, 512)
	if after.Width != before.Width || after.Height != before.Height {
		t.Errorf("moving changed the output from %d×%d to %d×%d", before.Width, before.Height, after.Width, after.Height)
	}
	if w.MoveFrame(512, 512, -5, 0) {
		t.Error("a move past the image's edge changed the canvas")
	}
	if New(compose.Draft{}).MoveFrame(512, 512, 1, 1) || New(compose.Draft{}).ResizeFrame(512, 512, EdgeLeft, -64, 0) {
		t.Error("a frame without a start image moved")
	}
}

// TestFrameActionsTellTheirObservers: each change is told once; a drag that changes nothing is
// not told.
func TestFrameActionsTellTheirObservers(t *testing.T) {
	w := startWith(256, 256, [4]int{})
	n := 0
	w.Observe(CanvasChanged, func(Change) { n++ })
	w.ResizeFrame(512, 512, EdgeTop, 0, -64)
	w.MoveFrame(512, 512, 0, 10)
	w.MoveFrame(512, 512, 5, 0) // no extension left or right: nothing
	if n != 2 {
		t.Errorf("told %d times, want 2", n)
	}
}

// TestMoveFrameMovesTheCrop: a crop frame moves over the image, clamped at its edges (a crop that
// fills the image along an axis does not move that way); the frame is drawn where the crop is,
// and the draft saved across launches keeps it.
func TestMoveFrameMovesTheCrop(t *testing.T) {
	w := startWith(400, 200, [4]int{})
	if !w.Canvas().Movable(512, 512) || w.Canvas().Movable(400, 200) {
		t.Error("a 200×200 crop of a 400×200 image is not movable, or the whole image is")
	}
	if !w.MoveFrame(512, 512, 50, 30) { // the crop fills the height: only x moves
		t.Fatal("moving the crop changed nothing")
	}
	if got := w.Canvas().CropOffset; got != image.Pt(50, 0) {
		t.Fatalf("crop offset %v, want (50,0)", got)
	}
	if f, _ := w.Canvas().Frame(512, 512); f.Crop != image.Rect(150, 0, 350, 200) {
		t.Errorf("the frame is at %v, want (150,0)-(350,200)", f.Crop)
	}
	w.MoveFrame(512, 512, 500, 0) // clamped: the crop at the right edge
	if got := w.Canvas().CropOffset; got != image.Pt(100, 0) {
		t.Fatalf("crop offset %v past the right edge, want (100,0)", got)
	}
	if w.MoveFrame(512, 512, 10, 0) || w.MoveFrame(512, 512, 0, -10) {
		t.Error("a crop at the image's edge moved further")
	}
	if w.MoveFrame(0, 0, -10, 0) {
		t.Error("a crop without a chosen size moved")
	}
	saved := w.Canvas().Saved()
	if saved.CropOffset != [2]int{100, 0} {
		t.Fatalf("the saved canvas keeps the offset as %v", saved.CropOffset)
	}
	back, err := Resumed(*saved, w.Canvas().Start.Image.Image, nil)
	if err != nil || back.CropOffset != image.Pt(100, 0) {
		t.Errorf("resumed offset %v (%v), want (100,0)", back.CropOffset, err)
	}
	// A new start image starts centred.
	w.SetStart(w.Canvas().Start.Image)
	if w.Canvas().CropOffset != (image.Point{}) {
		t.Error("a new start image kept the last one's crop offset")
	}
}
