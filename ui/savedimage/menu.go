package savedimage

import (
	"fyne.io/fyne/v2"

	"easel/app/history"

	"easel/ui/gallery"
)

// Menu is a history image's context menu: what it is (and whom it was made for), its recipe
// whole or in part, the actions that make new images from it, and the file's.
func (a *Actions) Menu(e history.Entry) *fyne.Menu {
	sh := a.sh
	items := []*fyne.MenuItem{
		fyne.NewMenuItem("Use All (restore the recipe)", func() { sh.UseAll(e) }),
		fyne.NewMenuItem("Use Prompt", func() { sh.UsePrompt(e) }),
		fyne.NewMenuItem("Use Seed", func() { sh.UseSeed(e) }),
		fyne.NewMenuItemSeparator(),
	}
	if e.Settings == nil || e.Settings.Grid == nil { // a grid's picture is not one image to rework
		items = append(items, fyne.NewMenuItem("Refine this", func() { sh.Refine(e.Path) }),
			fyne.NewMenuItem("Vary", func() { sh.Vary(e) }))
		items = append(items, more(sh.Upscales, e)...) // with the chosen upscaler, Lanczos
		items = append(items, fyne.NewMenuItemSeparator())
	}
	items = append(items, more(sh.Help, e)...) // Describe, Check against prompt
	items = append(items, fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem(sh.Desktop.Label(), func() { a.RevealFile(e.Path) }),
		fyne.NewMenuItem("Copy image", func() { a.CopyFile(e.Path) }),
		fyne.NewMenuItem("Move to Trash", func() { sh.Trash(e) }),
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

// more is f's items for e, or none when f is nil.
func more(f func(history.Entry) []*fyne.MenuItem, e history.Entry) []*fyne.MenuItem {
	if f == nil {
		return nil
	}
	return f(e)
}
