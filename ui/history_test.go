package ui

import (
	"image"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"easel/app/history"
	"easel/app/imagefile"
)

// Images already in the output folder are listed when the window opens; tapping one restores
// the prompt, size, steps, CFG and seed that made it.
func TestHistoryListsTheOutputFolderAndRestores(t *testing.T) {
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.ScanHistory = true
		set := &imagefile.Settings{Prompt: "an owl at night", NegativePrompt: "blur", Width: 1376, Height: 768, Steps: 12, CFG: 3.5, Seed: 99, Sampler: "Euler"}
		// Written by another session: a store of its own on the same folder.
		if _, err := history.New(d.History.Folder).Save(image.NewNRGBA(image.Rect(0, 0, 32, 18)), set, time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
	})
	h.pump("the folder scan", func() bool { return len(h.s.history.Thumbs()) == 1 })
	tb := h.s.history.Thumbs()[0]
	test.Tap(tb)
	if h.s.prompt.Text.Text != "an owl at night" || h.s.draft().Seed != 99 || h.s.draft().RandomSeed ||
		h.s.options.SizeSelect.Selected != "16:9" || h.s.options.Steps.Text != "12" || h.s.draft().CFG != 3.5 || h.s.prompt.Negative.Disabled() {
		t.Errorf("restored prompt %q seed %d size %q steps %q cfg %g", h.s.prompt.Text.Text, h.s.draft().Seed, h.s.options.SizeSelect.Selected, h.s.options.Steps.Text, h.s.draft().CFG)
	}
}
