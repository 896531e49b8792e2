package ui

import (
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/maskpaint"
)

// After an outpaint (an extended, masked run) the canvas offers Continue from this: the result
// becomes the start image with an empty mask and no extension; ⌘Z brings the previous start back.
// A run from the prompt alone does not offer it.
func TestContinueFromThisAfterAnEdit(t *testing.T) {
	h := newHarness(t, 64e9)
	s := h.s
	s.work.SetStart(mustCondition(t, h.writePNG("photo.png", 256, 256)))
	s.doc().Start.Mask.Begin()
	s.doc().Start.Mask.Stroke(maskpaint.Point{X: 40, Y: 40}, maskpaint.Point{X: 120, Y: 120}, 16, false)
	s.doc().Start.Mask.End()
	s.work.MaskChanged()
	s.work.ExtendSide(sideRight)
	test.Tap(s.generateBtn)
	<-h.gen.started
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the edit saved and shown", func() bool { return len(s.history.Entries) == 1 && s.actions.Shown() != "" })
	if !s.actions.Continue.Visible() {
		t.Fatal("no Continue from this after the edit")
	}
	result := s.history.Entries[0].Path
	test.Tap(s.actions.Continue)
	h.pump("the result as the start image", func() bool { return s.doc().Start != nil && s.doc().Start.Image.Name == filepath.Base(result) })
	if s.doc().Start.Mask.Coverage() != 0 || s.doc().Extend != [4]int{} || s.doc().Start.Image.Image.Rect.Dx() != 256+extendStep {
		t.Errorf("continuing: mask %.2f, extension %v, start %v", s.doc().Start.Mask.Coverage(), s.doc().Extend, s.doc().Start.Image.Image.Rect)
	}
	s.undo()
	if s.doc().Start == nil || s.doc().Start.Image.Name != "photo.png" || s.doc().Start.Mask.Coverage() == 0 {
		t.Errorf("⌘Z after Continue from this: start %v", s.doc().Start != nil)
	}

	// A run from the prompt alone: no offer.
	s.work.RemoveStart()
	test.Tap(s.generateBtn)
	<-h.gen.started
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the text-to-image result saved", func() bool { return len(s.history.Entries) == 2 && s.actions.Shown() == s.history.Entries[0].Path })
	if s.actions.Continue.Visible() {
		t.Error("Continue from this is offered after a text-to-image run")
	}
}
