package ui

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"easel/engine/convert"
	"easel/internal/generatecase"
	"easel/internal/tinysnapshot"
)

// TestScreenshotDescribe renders, with the real theme on the software painter, Describe's
// suggestion for a condition image on the untied tiny model (its random weights write nonsense)
// with Use as prompt offered. It writes the PNG only when EASEL_SCREENSHOTS names a folder:
//
//	EASEL_SCREENSHOTS=docs/screenshots go test ./ui -run ScreenshotDescribe
func TestScreenshotDescribe(t *testing.T) {
	dir := os.Getenv("EASEL_SCREENSHOTS")
	if dir == "" {
		t.Skip("set EASEL_SCREENSHOTS to a folder to write the screenshot")
	}
	model := generatecase.Model(t, tinysnapshot.Permutation{A: 7907, B: 5}, convert.ProfileCortiq)
	h := newHarnessWith(t, 16e9, func(_ *harness, d *Deps) { d.Settings.Model = model })
	h.patience = 3 * time.Minute
	fyne.CurrentApp().Settings().SetTheme(theme.DefaultTheme())
	path := generatecase.PicturePNG(t, 96, 64)
	h.s.addLoaded([]loadedCondition{{c: mustCondition(t, path)}})
	p := h.s.help
	p.Source.SetSelected("Condition image 1")
	test.Tap(p.Describe)
	h.pump("Describe to finish", func() bool { return !p.Writing() })
	// The test driver lays out again only on a resize: the suggestion appeared after the last one.
	h.w.Resize(fyne.NewSize(1439, 899))
	h.w.Canvas().Capture()
	h.w.Resize(screen1440) // the README's screenshots are 1440×900
	f, err := os.Create(filepath.Join(dir, "window-describe.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, h.w.Canvas().Capture()); err != nil {
		t.Fatal(err)
	}
}
