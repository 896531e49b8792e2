package ui

import (
	"image"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/ui/canvasarea"
)

// A job of the artist's that waits behind a studio image has shown nothing yet: the lent
// window's canvas shows the studio's picture, labelled, until that job's first preview takes it
// back; after that, a studio picture never replaces the artist's preview.
func TestStudioPictureWaitsForTheArtistsFirstPreview(t *testing.T) {
	h := newHarness(t, 64e9)
	s := h.s
	studio := func() {
		s.showStudioPicture(canvasarea.FramePreview(image.NewNRGBA(image.Rect(0, 0, 16, 16))), 16, 16, "For the studio: image 1 of batch 7, step 3 of 60")
	}

	test.Tap(s.generateBtn)
	<-h.gen.started
	h.pump("the artist's job running", func() bool { return s.model.Current() != 0 })
	studio()
	if !s.lentShown || !strings.HasPrefix(s.canvas.Caption.Text, "For the studio") {
		t.Fatalf("with the artist's job not yet showing anything, the canvas shows %q (studio picture %v)", s.canvas.Caption.Text, s.lentShown)
	}

	h.gen.step <- struct{}{}
	h.pump("the artist's first preview", func() bool { return s.canvasJob == s.model.Current() })
	if s.lentShown || strings.HasPrefix(s.canvas.Caption.Text, "For the studio") {
		t.Fatalf("the artist's first preview did not take the canvas back: %q", s.canvas.Caption.Text)
	}
	studio()
	if s.lentShown || strings.HasPrefix(s.canvas.Caption.Text, "For the studio") {
		t.Errorf("a studio picture replaced the artist's preview: %q", s.canvas.Caption.Text)
	}
	for range fakeSteps - 1 {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the artist's image saved", func() bool { return len(s.history.Entries) == 1 })
}
