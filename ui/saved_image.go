package ui

import (
	"fyne.io/fyne/v2"

	"easel/app/history"

	"easel/ui/savedimage"
)

// The shell's side of the saved image's actions (ui/savedimage): the canvas's buttons over a
// saved image and the history's right-click menu.

// newSavedImage builds the buttons and the menu with the shell's services.
func (s *window) newSavedImage() *savedimage.Actions {
	return savedimage.New(savedimage.Shell{
		Do:      s.deps.Do,
		Say:     s.say,
		Desktop: s.deps.Desktop,
		Refine:  func(path string) { s.work.Refine(path) },
		ContinueFrom: func(path string) {
			s.remember("Continue from " + shortPath(path))
			s.work.LoadStart(path)
		},
		Changed:   func() { s.keeping.Refresh() }, // Save to… (ui/keeping)
		UseAll:    s.useAll,
		UsePrompt: s.usePrompt,
		UseSeed:   s.useSeed,
		Vary:      s.varyEntry,
		Trash:     s.trashEntry,
		// with the chosen upscaler and Lanczos (ui/upscale, built after the buttons)
		Upscales: func(e history.Entry) []*fyne.MenuItem { return s.upscales.EntryItems(e) },
		Help:     s.help.EntryItems, // Describe, Check against prompt (ui/prompthelp)
	})
}

// setShownFile records the saved file on the canvas ("" for none): its buttons follow.
func (s *window) setShownFile(path string) {
	s.lentShown = false // the canvas shows the artist's picture now
	s.actions.Show(path)
}
