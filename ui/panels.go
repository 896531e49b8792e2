package ui

import (
	"fmt"

	"fyne.io/fyne/v2"

	"easel/app/memplan"
	"easel/app/settings"
	"easel/ui/gallery"
	"easel/ui/prompthelp"
)

// The wiring of the panels that live in their own packages: each gets what it needs of the
// window through its Host (or Actions) here, and the window model itself.

// newPromptHelp builds Expand, Describe and Check (ui/prompthelp) on the window's model.
func (s *window) newPromptHelp() *prompthelp.Panel {
	return prompthelp.New(s.model, prompthelp.Host{
		Settings: func() settings.Settings { return s.deps.Settings },
		Memory:   func() (memplan.Geometry, int64) { return s.deps.Geometry, s.deps.Budget },
		Shown: func() prompthelp.Shown {
			return prompthelp.Shown{Job: s.canvasJob, Path: s.shownPath, Final: s.canvas.IsFinal}
		},
		SetCaption:   func(text string) { s.canvas.Caption.SetText(text) },
		ShowWriting:  func(what string, need memplan.WritingPrediction) { s.memory.ShowWriting(what, need) },
		WritingEnded: s.draftChanged, // the memory panel predicts the draft again
		Do:           s.deps.Do,
	})
}

// cellMenu is the contact sheet's cell menu: Describe and Check (ui/prompthelp), then the
// upscales (upscale_learned.go).
func (s *window) cellMenu(c *gallery.Cell) *fyne.Menu {
	at := prompthelp.Key{Path: c.Path}
	prompt := ""
	if c.Set != nil {
		prompt = c.Set.Prompt
	}
	return s.withUpscales(s.help.ImageMenu(c.Final, prompt, fmt.Sprintf("batch image %d", c.Index+1), at), c)
}
