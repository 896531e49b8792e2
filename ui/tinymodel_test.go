package ui

import (
	"context"
	"easel/ui/recipe"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/preview"
	"easel/engine/convert"
	"easel/internal/golden"
)

// TestTinyModelThroughTheWindow drives the window with the real generator on the tiny reference
// model converted to a .cmf: two queued jobs both finish, the canvas shows a new preview at every
// step, the final images land in history with their settings; a corrupt image dropped on the
// window gets a message; cancelling a third job mid-run leaves the app ready and history intact.
func TestTinyModelThroughTheWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("converts and runs the tiny model")
	}
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "tiny.cmf")
	if _, err := convert.Convert(context.Background(), snap, model, convert.Options{Profile: convert.ProfileF16}); err != nil {
		t.Fatal(err)
	}
	gen := &jobs.ModelGenerator{Path: model}
	t.Cleanup(func() { gen.Close() })
	calib := &preview.Calibrator{Cache: preview.Cache{Dir: t.TempDir()}}
	calib.Start(model)
	t.Cleanup(calib.Stop)
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.Generator = gen
		d.Calibrator = calib
		d.Settings.Model = model
		g, err := memplan.GeometryOf(model)
		if err != nil {
			t.Fatal(err)
		}
		d.Geometry = g
	})
	h.patience = 5 * time.Minute // a hang guard: real runs are slow on a loaded 2-core machine

	// pumpCountingPreviews runs UI calls until cond holds, counting each new step preview shown.
	previews := 0
	var shown image.Image
	pumpCountingPreviews := func(what string, cond func() bool) {
		h.pump(what, func() bool {
			if c := h.s.canvas.Current; c != nil && c != shown && !h.s.canvas.IsFinal {
				shown = c
				previews++
			}
			return cond()
		})
	}

	bad := filepath.Join(h.dir, "scan.png")
	if err := os.WriteFile(bad, []byte("\x89PNG\r\n\x1a\n not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.s.work.Drop(fyne.NewPos(5, 5), []fyne.URI{storage.NewFileURI(bad)})
	h.pump("the corrupt file's message", func() bool { return strings.Contains(h.s.message.Text, "scan.png") })
	if len(h.s.draft().Conditions) != 0 {
		t.Fatal("a corrupt file was added as a condition image")
	}

	h.s.options.SizeSelect.SetSelected(recipe.SizeCustomLabel)
	h.s.options.CustomW.SetText("256")
	h.s.options.CustomH.SetText("256")
	h.s.options.Steps.SetText("3")
	test.Type(h.s.prompt.Text, "a paper crane")
	test.Tap(h.s.generateBtn)
	test.Type(h.s.prompt.Text, " at dawn")
	test.Tap(h.s.generateBtn)
	pumpCountingPreviews("both jobs saved", func() bool { return len(h.s.history.Entries) == 2 })
	// Once the calibration for this model is ready the caption says nothing about it.
	calib.Wait()
	if s, _, _, err := calib.State(); s != preview.Ready {
		t.Fatalf("calibration status %v: %v", s, err)
	}
	if note := h.s.previewNote(); strings.Contains(note, "alibrat") || strings.Contains(note, "stand-in") {
		t.Errorf("preview caption %q after the calibration finished", note)
	}
	if previews < 6 {
		t.Errorf("%d step previews shown for two 3-step jobs; want a new one at every step", previews)
	}
	for i, want := range []string{"a paper crane at dawn", "a paper crane"} { // newest first
		e := h.s.history.Entries[i]
		if e.Settings == nil || e.Settings.Prompt != want || e.Settings.Steps != 3 || e.Settings.Width != 256 {
			t.Fatalf("history entry %d: %+v", i, e.Settings)
		}
		if _, err := os.Stat(e.Path); err != nil {
			t.Errorf("history image: %v", err)
		}
	}
	if !h.s.canvas.IsFinal || h.s.queue.Pending() != 0 {
		t.Fatal("after both jobs: no final image, or the queue is not empty")
	}

	h.s.options.Steps.SetText("40")
	test.Tap(h.s.generateBtn)
	pumpCountingPreviews("the third job's first step", func() bool { return strings.Contains(h.s.progress.Stage.Text, "Step 1 of 40") })
	h.s.cancelCurrent()
	h.pump("the cancelled job to end", func() bool { return h.s.queue.Pending() == 0 && h.s.cancelBtn.Disabled() })
	if len(h.s.history.Entries) != 2 {
		t.Errorf("history holds %d images after a cancel, want the 2 finished ones", len(h.s.history.Entries))
	}
	if h.s.generateBtn.Disabled() {
		t.Error("Generate is disabled after the cancel; the app should be ready")
	}
}
