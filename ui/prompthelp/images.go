package prompthelp

import (
	"image"
	"path/filepath"

	"fyne.io/fyne/v2"

	"easel/app/history"
	"easel/engine/imageio"
	"easel/ui/kit"
)

// Describe and Check on images that are not on the panel's source list: a history image (the
// gallery's right-click menu), a batch image (the contact sheet cell's right-click menu) and an
// image file dropped on the panel. Describe writes into the same suggestion, so "Use as prompt"
// and Undo work as for the panel's own Describe; Check lists its answers under the panel's
// "Check picture", headed by the image it looked at.

// Menu item labels (the gallery's and the contact sheet's).
const (
	MenuDescribe = "Describe"
	MenuCheck    = "Check against prompt"
)

// EntryItems are a history image's Describe and Check items (Check only when its PNG records
// the prompt that made it).
func (h *Panel) EntryItems(e history.Entry) []*fyne.MenuItem {
	items := []*fyne.MenuItem{fyne.NewMenuItem(MenuDescribe, func() { h.describeFile(e.Path) })}
	check := fyne.NewMenuItem(MenuCheck, func() { h.checkFile(e) })
	if e.Settings == nil || e.Settings.Prompt == "" {
		check.Disabled = true // a PNG from another tool: no prompt to check against
	}
	return append(items, check)
}

// describeFile describes the image file at path; an unreadable file or a non-image is said,
// with what to do, and nothing else changes.
func (h *Panel) describeFile(path string) {
	img, err := imageio.Load(path)
	if err != nil {
		h.say("Describe %s: %v. Choose an image file (PNG, JPEG or WebP).", filepath.Base(path), err)
		return
	}
	h.describeImage(img)
}

// checkFile checks a history image against the prompt its PNG records.
func (h *Panel) checkFile(e history.Entry) {
	if e.Settings == nil || e.Settings.Prompt == "" {
		h.say("Check: %s does not record the prompt that made it (it was not made by Easel), so there is nothing to check it against.", filepath.Base(e.Path))
		return
	}
	img, err := imageio.Load(e.Path)
	if err != nil {
		h.say("Check %s: %v", filepath.Base(e.Path), err)
		return
	}
	h.checkPicture(img, e.Settings.Prompt, filepath.Base(e.Path), Key{Path: e.Path})
}

// ImageMenu is a batch image's right-click menu: Describe img, and Check it against prompt
// (what names it in the Check's heading, at is where the canvas shows it); both are off while
// the image is not finished (nil), Check also when there is no prompt.
func (h *Panel) ImageMenu(img image.Image, prompt, what string, at Key) *fyne.Menu {
	pic := kit.NRGBA(img)
	describe := fyne.NewMenuItem(MenuDescribe, func() { h.describeImage(pic) })
	check := fyne.NewMenuItem(MenuCheck, func() { h.checkPicture(pic, prompt, what, at) })
	describe.Disabled = pic == nil
	check.Disabled = pic == nil || prompt == ""
	return fyne.NewMenu("", describe, check)
}

// TakesDrop describes the first image file dropped on the panel and reports whether the drop
// was there; a drop anywhere else is the window's as before (start or condition image).
func (h *Panel) TakesDrop(pos fyne.Position, paths []string) bool {
	if len(paths) == 0 || !h.Box.Visible() {
		return false
	}
	d := fyne.CurrentApp().Driver()
	at, sz := d.AbsolutePositionForObject(h.Box), h.Box.Size()
	if pos.X < at.X || pos.Y < at.Y || pos.X >= at.X+sz.Width || pos.Y >= at.Y+sz.Height {
		return false
	}
	if len(paths) > 1 {
		h.say("Describe looks at one image at a time: describing %s (the first of the %d dropped).", filepath.Base(paths[0]), len(paths))
	}
	h.describeFile(paths[0])
	return true
}
