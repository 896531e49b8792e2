package ui

import (
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/history"
	"easel/app/unfinished"
	"easel/engine/convert"
	"easel/internal/tinymodel"
)

// TestKeptJobGoesOnlyWhenItsImageIsWritten: a window job is kept (app/unfinished) until its PNG
// is on disk. Its save into a folder that cannot be written fails: the job is still kept (a
// crash now would offer it again); once the image is saved in another folder the job is gone.
func TestKeptJobGoesOnlyWhenItsImageIsWritten(t *testing.T) {
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16}) // fingerprinted; the fake generator runs
	store, err := unfinished.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		blocker := filepath.Join(h.dir, "blocker") // a path through a file: unwritable even by root
		if err := os.WriteFile(blocker, []byte("a file"), 0o644); err != nil {
			t.Fatal(err)
		}
		d.Settings.OutputFolder = filepath.Join(blocker, "Images")
		d.History = history.New(d.Settings.OutputFolder)
		d.Settings.Model, d.Unfinished = model, store
	})
	test.Type(h.s.prompt.Text, "a quiet harbour")
	test.Tap(h.s.generateBtn)
	<-h.gen.started
	if left, _ := store.List(); len(left) != 1 {
		t.Fatalf("%d jobs kept while running, want 1", len(left))
	}
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the failed save's offer", func() bool { return h.s.keeping.Offering() })
	if left, _ := store.List(); len(left) != 1 {
		t.Fatalf("after its image failed to be written, %d jobs kept, want the job still kept", len(left))
	}

	h.s.keeping.SaveKeptTo(1, filepath.Join(h.dir, "elsewhere"))
	h.pump("the kept image saved", func() bool { return !h.s.keeping.Unsaved(1) })
	if left, _ := store.List(); len(left) != 0 {
		t.Errorf("after its image was written, %d jobs kept, want none", len(left))
	}
}
