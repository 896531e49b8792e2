package ui

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/history"
	"easel/app/imagefile"
)

// An image that cannot be saved is kept: the window says why and offers another folder. Saving
// there on a full disk fails, says so and offers again, leaving nothing half-written; once the
// disk has room the kept image is saved there with its settings, joins the history strip and is
// the file the canvas's buttons act on.
func TestUnsavedImageIsKeptAndSavedInAnotherFolder(t *testing.T) {
	var blocked string
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		// An output folder that cannot be made, even by root: its path runs through a file.
		blocker := filepath.Join(h.dir, "blocker")
		if err := os.WriteFile(blocker, []byte("a file"), 0o644); err != nil {
			t.Fatal(err)
		}
		blocked = filepath.Join(blocker, "Images")
		d.Settings.OutputFolder = blocked
		d.History = history.New(blocked)
	})
	test.Type(h.s.prompt.Text, "a quiet harbour")
	test.Tap(h.s.generateBtn)
	req := <-h.gen.started
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the offer of another folder", func() bool { return h.s.keeping.Offering() })
	for _, want := range []string{"Job 1's image was not saved", blocked, "Easel keeps it", "choose another folder"} {
		if !strings.Contains(h.s.message.Text, want) {
			t.Errorf("message %q lacks %q", h.s.message.Text, want)
		}
	}
	if !h.s.keeping.Unsaved(1) {
		t.Fatal("the unsaved image is not kept")
	}
	if h.s.keeping.SaveTo.Hidden || h.s.keeping.SaveTo.Disabled() {
		t.Error("Save to… is not offered over the kept image")
	}
	offer := h.w.Canvas().Overlays().Top()
	choose := buttonIn(offer, "Choose another folder…")
	if choose == nil {
		t.Fatalf("the dialog offers no other folder:\n%s", test.RenderObjectToMarkup(offer))
	}
	test.Tap(choose)
	if chooser := h.w.Canvas().Overlays().Top(); chooser == nil || chooser == offer || buttonIn(chooser, "Open") == nil {
		t.Error("Choose another folder… did not open a folder chooser")
	}

	// The folder chosen is on a full disk: the save fails, says so, offers again, leaves nothing.
	elsewhere := filepath.Join(h.dir, "elsewhere")
	restore := imagefile.FailWritesAfter(100)
	h.s.keeping.SaveKeptTo(1, elsewhere)
	h.pump("the full disk's offer", func() bool { return h.s.keeping.Offering() })
	restore()
	if !strings.Contains(h.s.message.Text, "the disk is full") {
		t.Errorf("message %q does not say the disk is full", h.s.message.Text)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("the full disk's folder holds %v, want nothing half-written", entries)
	}
	if !h.s.keeping.Unsaved(1) {
		t.Fatal("the image is no longer kept after a failed save")
	}

	// With room on the disk, the kept image is saved there.
	h.s.keeping.SaveKeptTo(1, elsewhere)
	h.pump("the kept image saved", func() bool { return !h.s.keeping.Unsaved(1) })
	entries, _ := os.ReadDir(elsewhere)
	if len(entries) != 1 {
		t.Fatalf("the chosen folder holds %v, want the one image", entries)
	}
	path := filepath.Join(elsewhere, entries[0].Name())
	m, err := imagefile.ReadFile(path)
	if err != nil || m.Settings == nil || m.Settings.Prompt != "a quiet harbour" || m.Settings.Seed != req.Seed {
		t.Errorf("saved settings %+v, %v", m, err)
	}
	data, _ := os.ReadFile(path)
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	nrgba, ok := img.(*image.NRGBA)
	if !ok || nrgba.Bounds().Dx() != req.Width || nrgba.Bounds().Dy() != req.Height {
		t.Fatalf("saved image %T %v, want %d×%d NRGBA", img, img.Bounds(), req.Width, req.Height)
	}
	for i, v := range nrgba.Pix {
		if v != uint8(i%251) {
			t.Fatalf("saved pixel byte %d = %d, want the job's %d", i, v, i%251)
		}
	}
	if h.s.actions.Shown() != path || !h.s.keeping.SaveTo.Hidden || h.s.actions.Copy.Disabled() {
		t.Errorf("after saving: canvas file %q (want %s), Save to… hidden %v", h.s.actions.Shown(), path, h.s.keeping.SaveTo.Hidden)
	}
	if len(h.s.history.Entries) == 0 || h.s.history.Entries[0].Path != path {
		t.Error("the saved image is not in the history strip")
	}
	if !strings.Contains(h.s.message.Text, "Saved") || h.s.deps.Settings.OutputFolder != blocked {
		t.Errorf("message %q, output folder %q", h.s.message.Text, h.s.deps.Settings.OutputFolder)
	}
}
