package ui

import (
	"image"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"github.com/disintegration/imaging"

	"easel/app/imagefile"
	"easel/ui/model"
)

// A drag of the frame's handle is one named action and one undo step: the canvas shows the new
// extension, ⌘Z takes the whole drag back; a drag past the memory budget is refused with the
// reason and records nothing.
func TestFrameDragIsOneUndoStep(t *testing.T) {
	h := newHarness(t, 64e9)
	h.s.work.SetStart(mustCondition(t, h.writePNG("photo.png", 1024, 1024)))
	steps := len(h.s.undos)
	h.s.canvas.Editor.Frame.Resize(model.EdgeRight, 100, 0) // 1124 → 1120 wide
	if got := h.s.doc().Extend; got != [4]int{0, 0, 96, 0} {
		t.Fatalf("extension %v after the drag, want [0 0 96 0]", got)
	}
	if h.s.canvas.PixelW != 1120 || h.s.canvas.Editor.Ext() != h.s.doc().Extend {
		t.Errorf("the canvas shows %d wide with the extension %v", h.s.canvas.PixelW, h.s.canvas.Editor.Ext())
	}
	h.s.canvas.Editor.Frame.Move(-40, 0)
	if got := h.s.doc().Extend; got != [4]int{40, 0, 56, 0} {
		t.Fatalf("extension %v after the move, want [40 0 56 0]", got)
	}
	if len(h.s.undos) != steps+2 {
		t.Fatalf("%d undo steps after two drags, want %d", len(h.s.undos), steps+2)
	}
	h.s.undo()
	if got := h.s.doc().Extend; got != [4]int{0, 0, 96, 0} || !strings.Contains(h.s.message.Text, "moving the frame") {
		t.Fatalf("after ⌘Z: extension %v, message %q", got, h.s.message.Text)
	}
	h.s.undo()
	if got := h.s.doc().Extend; got != [4]int{} || h.s.canvas.Editor.Ext() != [4]int{} {
		t.Fatalf("after the second ⌘Z: extension %v, shown %v", got, h.s.canvas.Editor.Ext())
	}

	h.s.deps.Budget = 1e9
	h.s.canvas.Editor.Frame.Resize(model.EdgeBottom, 0, 512)
	if h.s.doc().Extend != [4]int{} || !strings.Contains(h.s.message.Text, "needs about") || len(h.s.undos) != steps {
		t.Errorf("a drag past the budget: extension %v, message %q, %d undo steps", h.s.doc().Extend, h.s.message.Text, len(h.s.undos)-steps)
	}
}

// A drag of the label over a start image the chosen size crops moves the crop: the run starts
// from the image's pixels where the frame now is, and the saved PNG records the crop's place;
// ⌘Z puts the crop back in the centre.
func TestFrameMoveCropsThereInTheRun(t *testing.T) {
	h := newHarness(t, 64e9)
	path := h.writePNG("wide.png", 512, 256)
	orig := mustCondition(t, path).Image
	h.s.work.SetStart(mustCondition(t, path))
	w, hh, err := h.s.draftCopy().OutputSize()
	if err != nil || w != hh {
		t.Fatalf("the draft's size is %d×%d (%v); the test needs a square one", w, hh, err)
	}
	if !h.s.doc().Movable(w, hh) {
		t.Fatal("the 256×256 crop of a 512×256 image is not movable")
	}
	steps := len(h.s.undos)
	h.s.canvas.Editor.Frame.Move(400, 0) // to the right edge: the crop's left at x 256
	if got := h.s.doc().CropOffset; got != image.Pt(128, 0) || len(h.s.undos) != steps+1 {
		t.Fatalf("crop offset %v with %d undo steps, want (128,0) and one", got, len(h.s.undos)-steps)
	}
	test.Type(h.s.prompt.Text, "a harbour")
	test.Tap(h.s.generateBtn)
	req := <-h.gen.started
	if req.Init == nil || req.Width != w || req.Height != hh {
		t.Fatalf("request %d×%d init %+v", req.Width, req.Height, req.Init)
	}
	right := imaging.Crop(orig, image.Rect(256, 0, 512, 256))
	sameNRGBA(t, "the request's start image", req.Init.Image, imaging.Resize(right, w, hh, imaging.Lanczos))
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the saved image", func() bool { return len(h.s.history.Entries) == 1 })
	m, err := imagefile.ReadFile(h.s.history.Entries[0].Path)
	if err != nil || m.Settings == nil || m.Settings.Init == nil || m.Settings.Init.CropOffset != [2]int{128, 0} {
		t.Fatalf("the saved image records %+v (%v), want the crop offset 128,0", m.Settings, err)
	}
	h.s.undo()
	if got := h.s.doc().CropOffset; got != (image.Point{}) {
		t.Errorf("after ⌘Z the crop offset is %v, want the centre", got)
	}
	// Use All on the saved image brings the crop's place back with its start image.
	h.s.useAll(h.s.history.Entries[0])
	if got := h.s.doc().CropOffset; got != image.Pt(128, 0) || h.s.doc().Start == nil {
		t.Errorf("after Use All the crop offset is %v, want (128,0)", got)
	}
	if f, _ := h.s.doc().Frame(w, hh); f.Crop != image.Rect(256, 0, 512, 256) {
		t.Errorf("after Use All the frame is at %v, want the right half", f.Crop)
	}
}
