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
	s.setStart(mustCondition(t, h.writePNG("photo.png", 256, 256)))
	s.start.mask.Begin()
	s.start.mask.Stroke(maskpaint.Point{X: 40, Y: 40}, maskpaint.Point{X: 120, Y: 120}, 16, false)
	s.start.mask.End()
	s.maskChanged()
	s.extendSide(sideRight)
	test.Tap(s.generateBtn)
	<-h.gen.started
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the edit saved and shown", func() bool { return len(s.history.entries) == 1 && s.shownPath != "" })
	if !s.actions.continueFrom.Visible() {
		t.Fatal("no Continue from this after the edit")
	}
	result := s.history.entries[0].Path
	test.Tap(s.actions.continueFrom)
	h.pump("the result as the start image", func() bool { return s.start != nil && s.start.c.Name == filepath.Base(result) })
	if s.start.mask.Coverage() != 0 || s.extend != [4]int{} || s.start.c.Image.Rect.Dx() != 256+extendStep {
		t.Errorf("continuing: mask %.2f, extension %v, start %v", s.start.mask.Coverage(), s.extend, s.start.c.Image.Rect)
	}
	s.undo()
	if s.start == nil || s.start.c.Name != "photo.png" || s.start.mask.Coverage() == 0 {
		t.Errorf("⌘Z after Continue from this: start %v", s.start != nil)
	}

	// A run from the prompt alone: no offer.
	s.removeStart()
	test.Tap(s.generateBtn)
	<-h.gen.started
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the text-to-image result saved", func() bool { return len(s.history.entries) == 2 && s.shownPath == s.history.entries[0].Path })
	if s.actions.continueFrom.Visible() {
		t.Error("Continue from this is offered after a text-to-image run")
	}
}
