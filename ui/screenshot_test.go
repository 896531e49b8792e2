package ui

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// TestScreenshotMemoryDoesNotFit renders, with the real theme on the software painter, the
// window refusing a size that does not fit a 16 GB machine (2K 16:9 with CFG on) and offering
// the largest size of that shape that fits. It writes the PNG only when EASEL_SCREENSHOTS names a folder:
//
//	EASEL_SCREENSHOTS=docs/screenshots go test ./ui -run Screenshot
func TestScreenshotMemoryDoesNotFit(t *testing.T) {
	dir := os.Getenv("EASEL_SCREENSHOTS")
	if dir == "" {
		t.Skip("set EASEL_SCREENSHOTS to a folder to write the screenshot")
	}
	h := newHarness(t, 16e9)
	fyne.CurrentApp().Settings().SetTheme(theme.DefaultTheme())
	h.w.Resize(fyne.NewSize(1400, 860))
	h.s.prompt.Text.SetText("A lighthouse on a cliff at dusk, wide cinematic shot")
	h.s.options.SizeSelect.SetSelected("16:9")
	h.s.options.ScaleRadio.SetSelected("2K")
	h.s.options.CFG.SetValue(4)
	if !h.s.generateBtn.Disabled() {
		t.Fatal("Generate is enabled; the screenshot would not show the refusal")
	}
	// The test driver does not lay out again when min sizes change; a render and two resizes let
	// wrapped labels settle.
	h.w.Canvas().Capture()
	h.w.Resize(fyne.NewSize(1399, 859))
	h.w.Canvas().Capture()
	h.w.Resize(fyne.NewSize(1400, 860))
	f, err := os.Create(filepath.Join(dir, "window-memory-does-not-fit.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, h.w.Canvas().Capture()); err != nil {
		t.Fatal(err)
	}
}
