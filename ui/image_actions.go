package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/history"

	"easel/ui/gallery"
)

// imageActions are the buttons over the canvas that act on the saved image shown there: Show in
// Finder (Show in folder on Linux) and Copy image. They are off while a preview or an unsaved
// image is shown; Save to… shows instead while the image on the canvas is one that could not be
// saved (ui/keeping's, placed beside them).
type imageActions struct {
	reveal, copy *widget.Button
	// refine makes the saved image shown the start image of the next generation.
	refine *widget.Button
	// continueFrom makes an edit's result the next start image (continue_from.go).
	continueFrom *widget.Button
}

func newImageActions(s *window) *imageActions {
	a := &imageActions{
		reveal: widget.NewButtonWithIcon(s.deps.Desktop.Label(), theme.FolderOpenIcon(), func() { s.revealFile(s.shownPath) }),
		copy:   widget.NewButtonWithIcon("Copy image", theme.ContentCopyIcon(), func() { s.copyFile(s.shownPath) }),
	}
	a.refine = widget.NewButtonWithIcon("Refine this", theme.ContentRedoIcon(), func() { s.work.Refine(s.shownPath) })
	a.refine.Disable()
	a.continueFrom = newContinueButton(s)
	a.reveal.Disable()
	a.copy.Disable()
	return a
}

// setShownFile records the saved file on the canvas ("" for none) and turns the buttons on or off.
func (s *window) setShownFile(path string) {
	s.shownPath = path
	s.lentShown = false // the canvas shows the artist's picture now
	for _, b := range []*widget.Button{s.actions.reveal, s.actions.copy, s.actions.refine} {
		if path == "" {
			b.Disable()
		} else {
			b.Enable()
		}
	}
	s.keeping.Refresh() // Save to… (ui/keeping)
	s.showContinue()
}

// revealFile shows a saved image in the Finder or the file manager (off the UI goroutine); a
// missing tool gets a message saying what to install.
func (s *window) revealFile(path string) {
	if path == "" {
		return
	}
	d := s.deps.Desktop
	go func() {
		err := d.Reveal(path)
		s.deps.Do(func() {
			if err != nil {
				s.say("%v", err)
			}
		})
	}()
}

// copyFile puts a saved image on the clipboard as a picture (off the UI goroutine: the clipboard
// tool may take a moment) and says so.
func (s *window) copyFile(path string) {
	if path == "" {
		return
	}
	d := s.deps.Desktop
	go func() {
		err := d.CopyImage(path)
		s.deps.Do(func() {
			if err != nil {
				s.say("%v", err)
			} else {
				s.say("Copied %s to the clipboard.", shortPath(path))
			}
		})
	}()
}

// entryMenu is a history image's context menu: its recipe whole or in part, the actions that
// make new images from it, and the file's.
func (s *window) entryMenu(e history.Entry) *fyne.Menu {
	items := []*fyne.MenuItem{
		fyne.NewMenuItem("Use All (restore the recipe)", func() { s.useAll(e) }),
		fyne.NewMenuItem("Use Prompt", func() { s.usePrompt(e) }),
		fyne.NewMenuItem("Use Seed", func() { s.useSeed(e) }),
		fyne.NewMenuItemSeparator(),
	}
	if e.Settings == nil || e.Settings.Grid == nil { // a grid's picture is not one image to rework
		items = append(items, fyne.NewMenuItem("Refine this", func() { s.work.Refine(e.Path) }),
			fyne.NewMenuItem("Vary", func() { s.varyEntry(e) }))
		items = append(items, s.upscales.EntryItems(e)...) // with the chosen upscaler, Lanczos (ui/upscale)
		items = append(items, fyne.NewMenuItemSeparator())
	}
	items = append(items, s.help.EntryItems(e)...) // Describe, Check against prompt (ui/prompthelp)
	items = append(items, fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem(s.deps.Desktop.Label(), func() { s.revealFile(e.Path) }),
		fyne.NewMenuItem("Copy image", func() { s.copyFile(e.Path) }),
		fyne.NewMenuItem("Move to Trash", func() { s.trashEntry(e) }),
	)
	info := fyne.NewMenuItem(gallery.DescribeEntry(e), nil)
	info.Disabled = true
	items = append([]*fyne.MenuItem{info, fyne.NewMenuItemSeparator()}, items...)
	if e.Settings != nil && e.Settings.Origin != "" {
		from := fyne.NewMenuItem("Made for "+e.Settings.Origin, nil)
		from.Disabled = true
		items = append([]*fyne.MenuItem{from}, items...)
	}
	return fyne.NewMenu("", items...)
}
