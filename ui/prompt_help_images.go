package ui

import (
	"context"
	"fmt"
	"image"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"

	"easel/app/history"
	"easel/app/jobs"
	"easel/app/textgen"
	"easel/engine/imageio"

	"easel/ui/gallery"
)

// Describe and Check on images that are not on the prompt-help panel's source list: a history
// image (the gallery's right-click menu), a batch image (the contact sheet cell's right-click
// menu) and an image file dropped on the panel. Describe writes into the same suggestion, so
// "Use as prompt" and Undo work as for the panel's own Describe; Check lists its answers under
// the panel's "Check picture", headed by the image it looked at.

// Menu item labels (the gallery's and the contact sheet's).
const (
	menuDescribe = "Describe"
	menuCheck    = "Check against prompt"
)

// entryItems are a history image's Describe and Check items (Check only when its PNG records
// the prompt that made it).
func (h *promptHelp) entryItems(e history.Entry) []*fyne.MenuItem {
	items := []*fyne.MenuItem{fyne.NewMenuItem(menuDescribe, func() { h.describeFile(e.Path) })}
	check := fyne.NewMenuItem(menuCheck, func() { h.checkFile(e) })
	if e.Settings == nil || e.Settings.Prompt == "" {
		check.Disabled = true // a PNG from another tool: no prompt to check against
	}
	return append(items, check)
}

// describeFile describes the image file at path; an unreadable file or a non-image is said,
// with what to do, and nothing else changes.
func (h *promptHelp) describeFile(path string) {
	img, err := imageio.Load(path)
	if err != nil {
		h.s.say("Describe %s: %v. Choose an image file (PNG, JPEG or WebP).", shortPath(path), err)
		return
	}
	h.describeImage(img)
}

// describeImage writes a prompt for img into the suggestion.
func (h *promptHelp) describeImage(img *image.NRGBA) {
	h.startSuggestion()
	h.write("Describe", h.plan(len(textgen.DescribeQuestion), img), func(ctx context.Context, w *textgen.Writer, o textgen.Options) (*textgen.Result, error) {
		return w.Describe(ctx, img, "", o)
	}, func(r *textgen.Result) { h.suggestion.SetText(r.Text) })
}

// checkFile checks a history image against the prompt its PNG records.
func (h *promptHelp) checkFile(e history.Entry) {
	if e.Settings == nil || e.Settings.Prompt == "" {
		h.s.say("Check: %s does not record the prompt that made it (it was not made by Easel), so there is nothing to check it against.", shortPath(e.Path))
		return
	}
	img, err := imageio.Load(e.Path)
	if err != nil {
		h.s.say("Check %s: %v", shortPath(e.Path), err)
		return
	}
	h.checkPicture(img, e.Settings.Prompt, filepath.Base(e.Path), canvasKey{path: e.Path})
}

// cellMenu is a batch image's right-click menu: Describe and Check against prompt, once it is
// finished.
func (h *promptHelp) cellMenu(c *gallery.Cell) *fyne.Menu {
	img := nrgbaOf(c.Final)
	describe := fyne.NewMenuItem(menuDescribe, func() { h.describeImage(img) })
	check := fyne.NewMenuItem(menuCheck, func() {
		h.checkPicture(img, c.Set.Prompt, fmt.Sprintf("batch image %d", c.Index+1), canvasKey{path: c.Path})
	})
	describe.Disabled = img == nil
	check.Disabled = img == nil || c.Set == nil || c.Set.Prompt == ""
	return fyne.NewMenu("", describe, check)
}

// cellMenu is the contact sheet's cell menu (the studio's, for sheetActions).
func (s *window) cellMenu(c *gallery.Cell) *fyne.Menu { return s.help.cellMenu(c) }

// nrgbaOf is img as NRGBA (nil for none); a finished image already is one.
func nrgbaOf(img image.Image) *image.NRGBA {
	if img == nil {
		return nil
	}
	if n, ok := img.(*image.NRGBA); ok {
		return n
	}
	b := img.Bounds()
	n := image.NewNRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			n.Set(x, y, img.At(x, y))
		}
	}
	return n
}

// takesDrop describes the first image file dropped on the prompt-help panel and reports whether
// the drop was there; a drop anywhere else is the window's as before (start or condition image).
func (h *promptHelp) takesDrop(pos fyne.Position, paths []string) bool {
	if h == nil || len(paths) == 0 || !h.box.Visible() {
		return false
	}
	d := fyne.CurrentApp().Driver()
	at, sz := d.AbsolutePositionForObject(h.box), h.box.Size()
	if pos.X < at.X || pos.Y < at.Y || pos.X >= at.X+sz.Width || pos.Y >= at.Y+sz.Height {
		return false
	}
	if len(paths) > 1 {
		h.s.say("Describe looks at one image at a time: describing %s (the first of the %d dropped).", shortPath(paths[0]), len(paths))
	}
	h.describeFile(paths[0])
	return true
}

// canvasKey names an image the canvas may show: a job's picture (job), else a saved file (path).
type canvasKey struct {
	job  jobs.ID
	path string
}

// shownKey is the picture on the canvas now (the zero key when none is final).
func (h *promptHelp) shownKey() canvasKey {
	if !h.s.canvas.IsFinal {
		return canvasKey{}
	}
	if h.s.canvasJob != 0 {
		return canvasKey{job: h.s.canvasJob}
	}
	return canvasKey{path: h.s.shownPath}
}

// captionChecks sums a Check up in the canvas's caption ("Check: ✓ a heron · ✗ two reeds"),
// beside the picture, when the canvas still shows the image checked; the next picture shown
// clears it.
func (h *promptHelp) captionChecks(at canvasKey, verdicts []textgen.Verdict) {
	now := h.shownKey()
	if len(verdicts) == 0 || (at.job == 0 && at.path == "") {
		return
	}
	if (at.job != 0 && at.job != now.job) || (at.job == 0 && at.path != h.s.shownPath) || !h.s.canvas.IsFinal {
		return
	}
	parts := make([]string, len(verdicts))
	for i, v := range verdicts {
		parts[i] = v.Mark() + " " + truncateRunes(v.Element, 32)
	}
	h.s.canvas.Caption.SetText("Check: " + strings.Join(parts, " · "))
}
