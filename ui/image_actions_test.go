package ui

import (
	"image"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"easel/app/history"
	"easel/app/imagefile"
)

// A history image's context menu offers Show in folder and Copy image; copying runs the
// installed clipboard tool on the file, showing a folder without xdg-open says what to install;
// the canvas's buttons act on the restored image.
func TestRevealAndCopyAHistoryImage(t *testing.T) {
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.ScanHistory = true
		set := &imagefile.Settings{Prompt: "a heron", Width: 1024, Height: 1024, Steps: 8, CFG: 1, Seed: 4}
		if _, err := history.New(d.History.Folder).Save(image.NewNRGBA(image.Rect(0, 0, 16, 16)), set, time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
	})
	h.pump("the folder scan", func() bool { return len(h.s.history.Thumbs()) == 1 })
	tb := h.s.history.Thumbs()[0]
	path := tb.Entry().Path
	if !h.s.actions.Copy.Disabled() || !h.s.actions.Reveal.Disabled() {
		t.Error("the canvas's Copy image / Show in folder are on with no saved image shown")
	}

	test.TapSecondary(tb)
	menu := h.w.Canvas().Overlays().Top()
	if menu == nil {
		t.Fatal("right-click shows no menu")
	}
	markup := test.RenderObjectToMarkup(menu)
	at := -1
	for _, want := range []string{"Use All", "Use Prompt", "Use Seed", "Show in folder", "Copy image", "Move to Trash"} {
		i := strings.Index(markup, want)
		if i < 0 || i < at {
			t.Errorf("the menu lacks %q, or has it out of order", want)
		}
		at = i
	}
	h.w.Canvas().Overlays().Remove(menu)

	menuItem(t, h.s.actions.Menu(tb.Entry()), "Copy image").Action()
	c := <-h.ran
	if c.Name != "xclip" || c.Args[len(c.Args)-1] != path {
		t.Errorf("Copy image ran %v, want xclip on %s", c, path)
	}
	h.pump("the copy message", func() bool { return strings.Contains(h.s.message.Text, "Copied "+filepath.Base(path)) })

	test.Tap(tb)
	if h.s.actions.Shown() != path || h.s.actions.Reveal.Disabled() {
		t.Fatalf("after restoring, the canvas's buttons act on %q, want %s", h.s.actions.Shown(), path)
	}
	test.Tap(h.s.actions.Reveal)
	h.pump("the missing-tool message", func() bool { return strings.Contains(h.s.message.Text, "install xdg-open (package xdg-utils)") })
	if !strings.Contains(h.s.message.Text, filepath.Dir(path)) {
		t.Errorf("message %q does not name the folder to open by hand", h.s.message.Text)
	}
	select {
	case c := <-h.ran:
		t.Errorf("ran %v although xdg-open is missing", c)
	default:
	}
}

// menuItem is the item of m labelled label.
func menuItem(t *testing.T, m *fyne.Menu, label string) *fyne.MenuItem {
	t.Helper()
	for _, it := range m.Items {
		if it.Label == label {
			return it
		}
	}
	t.Fatalf("the menu has no %q", label)
	return nil
}
