package canvasarea

import (
	"image"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"

	"easel/app/maskpaint"
)

// editorOn is a mask editor of a w×h mask shown in a window of size (the test driver lays the
// editor out over the whole window).
func editorOn(t *testing.T, w, h int, size fyne.Size) (*MaskEditor, fyne.Window) {
	t.Helper()
	test.NewTempApp(t)
	e := NewMaskEditor(nil)
	e.setMask(maskpaint.New(w, h), [4]int{})
	win := test.NewTempWindow(t, e)
	win.SetPadded(false)
	win.Resize(size)
	e.Resize(size)
	return e, win
}

// sameMask fails unless got equals want pixel for pixel.
func sameMask(t *testing.T, what string, got, want *image.Gray) {
	t.Helper()
	if got.Rect != want.Rect {
		t.Fatalf("%s: mask %v, want %v", what, got.Rect, want.Rect)
	}
	for i := range got.Pix {
		if got.Pix[i] != want.Pix[i] {
			x, y := i%got.Rect.Dx(), i/got.Rect.Dx()
			t.Fatalf("%s: pixel %d,%d is %d, want %d", what, x, y, got.Pix[i], want.Pix[i])
		}
	}
}

// A drag across the editor paints the stroke between the pointer's positions, in image pixels:
// the 200×100 mask is shown at twice its size, so widget positions are halved.
func TestMaskEditorDragPaintsTheStroke(t *testing.T) {
	e, _ := editorOn(t, 200, 100, fyne.NewSize(400, 200))
	e.Radius = 6
	// Fyne's drag events carry the pointer's current position and the move since the last one.
	e.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(100, 100)}, Dragged: fyne.NewDelta(60, 0)})
	e.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(100, 160)}, Dragged: fyne.NewDelta(0, 60)})
	e.DragEnd()

	want := maskpaint.New(200, 100)
	want.Stroke(maskpaint.Point{X: 20, Y: 50}, maskpaint.Point{X: 50, Y: 50}, 6, false)
	want.Stroke(maskpaint.Point{X: 50, Y: 50}, maskpaint.Point{X: 50, Y: 80}, 6, false)
	sameMask(t, "after the drag", e.mask.Image(), want.Image())
	if got := e.mask.Image().GrayAt(35, 50).Y; got != maskpaint.Repaint {
		t.Fatalf("the middle of the stroke is %d", got)
	}
	// The overlay shows exactly the painted pixels.
	for i, v := range e.mask.Image().Pix {
		if a := e.overlay.Pix[4*i+3]; (v != 0) != (a != 0) {
			t.Fatalf("overlay pixel %d has alpha %d over mask value %d", i, a, v)
		}
	}
	// The whole drag is one undo step.
	if !e.mask.Undo() || !e.mask.Empty() || e.mask.CanUndo() {
		t.Error("one undo does not take the whole drag back")
	}
}

// The test driver's drag finds the editor on the window and paints from the drag's start.
func TestMaskEditorThroughTheCanvasDrag(t *testing.T) {
	e, win := editorOn(t, 100, 100, fyne.NewSize(100, 100))
	e.Radius = 3
	test.Drag(win.Canvas(), fyne.NewPos(50, 50), 20, 0)
	if e.mask.Empty() {
		t.Fatal("a drag over the editor painted nothing")
	}
	if e.mask.Image().GrayAt(40, 50).Y != maskpaint.Repaint {
		t.Error("the drag did not paint along its path")
	}
}

// The eraser, a click, a letterboxed image: a 100×50 mask in a 200×200 editor is shown at 2×,
// 50 units down from the top.
func TestMaskEditorEraserAndLetterbox(t *testing.T) {
	e, _ := editorOn(t, 100, 50, fyne.NewSize(200, 200))
	e.Radius = 10
	e.Tapped(&fyne.PointEvent{Position: fyne.NewPos(100, 100)}) // the image's centre: 50,25
	want := maskpaint.New(100, 50)
	want.Stroke(maskpaint.Point{X: 50, Y: 25}, maskpaint.Point{X: 50, Y: 25}, 10, false)
	sameMask(t, "after a click", e.mask.Image(), want.Image())

	e.Erase, e.Radius = true, 4
	e.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(140, 100)}, Dragged: fyne.NewDelta(80, 0)})
	e.DragEnd()
	want.Stroke(maskpaint.Point{X: 30, Y: 25}, maskpaint.Point{X: 70, Y: 25}, 4, true)
	sameMask(t, "after erasing", e.mask.Image(), want.Image())
	if e.mask.Image().GrayAt(50, 25).Y != maskpaint.Keep || e.mask.Image().GrayAt(50, 17).Y != maskpaint.Repaint {
		t.Error("the eraser did not clear the band through the dab, or cleared past it")
	}
}

// The brush ring follows the pointer at the brush's size on screen and hides when it leaves.
func TestMaskEditorBrushRing(t *testing.T) {
	e, _ := editorOn(t, 200, 100, fyne.NewSize(400, 200))
	e.Radius = 10
	e.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(100, 50)}})
	if !e.ring.Visible() || e.ring.Size() != fyne.NewSize(40, 40) || e.ring.Position() != fyne.NewPos(80, 30) {
		t.Errorf("ring at %v size %v visible %v; want a 40-unit ring around 100,50", e.ring.Position(), e.ring.Size(), e.ring.Visible())
	}
	e.MouseOut()
	if e.ring.Visible() {
		t.Error("the ring stays after the pointer left")
	}
}

// On an extended canvas the overlay covers the new area too (tinted) and the mask sits at the
// extension's left and top: a 100×50 mask with 20 px left and 10 px top added is a 120×60
// canvas, shown at twice its size in a 240×120 editor.
func TestMaskEditorOnAnExtendedCanvas(t *testing.T) {
	test.NewTempApp(t)
	e := NewMaskEditor(nil)
	e.setMask(maskpaint.New(100, 50), [4]int{20, 10, 0, 0})
	win := test.NewTempWindow(t, e)
	win.SetPadded(false)
	win.Resize(fyne.NewSize(240, 120))
	e.Resize(fyne.NewSize(240, 120))
	e.Radius = 4
	e.Tapped(&fyne.PointEvent{Position: fyne.NewPos(2*(20+50), 2*(10+25))})
	want := maskpaint.New(100, 50)
	want.Stroke(maskpaint.Point{X: 50, Y: 25}, maskpaint.Point{X: 50, Y: 25}, 4, false)
	sameMask(t, "a dab on the extended canvas", e.mask.Image(), want.Image())
	if b := e.overlay.Rect; b.Dx() != 120 || b.Dy() != 60 {
		t.Fatalf("overlay %v, want the extended 120×60", b)
	}
	if c := e.overlay.NRGBAAt(5, 5); c != extensionOverlay {
		t.Errorf("the new area's overlay is %v, want the extension tint", c)
	}
	if c := e.overlay.NRGBAAt(20+50, 10+25); c.A == 0 || c.R != maskOverlay.R {
		t.Errorf("the painted pixel's overlay is %v", c)
	}
	if c := e.overlay.NRGBAAt(20+5, 10+5); c.A != 0 {
		t.Errorf("an unpainted pixel of the image is tinted %v", c)
	}
}
