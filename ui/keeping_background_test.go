package ui

import (
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// TestClosingTheWindowKeepsTheImageBeingSaved: the window closes right after a job finished,
// while its image is still being written; the file is complete in the output folder when the
// window has closed.
func TestClosingTheWindowKeepsTheImageBeingSaved(t *testing.T) {
	h := newHarness(t, 16e9)
	test.Tap(h.s.generateBtn)
	<-h.gen.started
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the job done", func() bool { return strings.Contains(h.s.progress.Stage.Text, "done") })
	h.closeWindow()
	out := h.s.deps.Settings.OutputFolder
	names, _ := filepath.Glob(filepath.Join(out, "*.png"))
	if len(names) != 1 {
		t.Fatalf("after closing, the output folder %s holds %d images, want the finished one", out, len(names))
	}
	if _, err := loadImage(names[0]); err != nil {
		t.Errorf("the image saved while the window closed does not read back: %v", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(out, ".*")); len(leftovers) != 0 {
		t.Errorf("a partial write was left behind: %v", leftovers)
	}
}
