package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app"
)

// The window opens with the app's name and version and the three areas later work fills.
func TestMainWindowShowsNameVersionAndPanels(t *testing.T) {
	a := test.NewTempApp(t)
	w := NewMainWindow(a)
	defer w.Close()
	if w.Title() != app.Name {
		t.Errorf("title %q, want %q", w.Title(), app.Name)
	}
	markup := test.RenderToMarkup(w.Canvas())
	for _, want := range []string{app.Name + " " + app.Version, "Prompt", "Condition images", "Memory", "GPU time", "Describe the image"} {
		if !strings.Contains(markup, want) {
			t.Errorf("window does not show %q", want)
		}
	}
	img := w.Canvas().Capture()
	if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 600 {
		t.Errorf("window renders at %v, want at least 800×600", b)
	}
}
