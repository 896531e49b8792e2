package ui

import (
	"fmt"

	"fyne.io/fyne/v2"

	"easel/app/history"
	"easel/app/memplan"
	"easel/app/settings"
	"easel/ui/gallery"
	"easel/ui/kit"
	"easel/ui/prompthelp"
	"easel/ui/recipe"
	"easel/ui/upscale"
)

// The wiring of the panels that live in their own packages: each gets what it needs of the
// window through its Host (or Actions) here, and the window model itself.

// newPromptHelp builds Expand, Describe and Check (ui/prompthelp) on the window's model.
func (s *window) newPromptHelp() *prompthelp.Panel {
	return prompthelp.New(s.model, prompthelp.Host{
		Settings: func() settings.Settings { return s.deps.Settings },
		Memory:   func() (memplan.Geometry, int64) { return s.deps.Geometry, s.deps.Budget },
		Shown: func() prompthelp.Shown {
			return prompthelp.Shown{Job: s.canvasJob, Path: s.actions.Shown(), Final: s.canvas.IsFinal}
		},
		SetCaption:   func(text string) { s.canvas.Caption.SetText(text) },
		ShowWriting:  func(what string, need memplan.WritingPrediction) { s.memory.ShowWriting(what, need) },
		WritingEnded: s.draftChanged, // the memory panel predicts the draft again
		Do:           s.deps.Do,
	})
}

// newFastDrafts builds the LoRA section's Draft / Final switch and its download (ui/recipe):
// the model's UseDrafts and UseFinal re-predict through its observer, so only the list is kept
// here.
func (s *window) newFastDrafts() *recipe.FastDrafts {
	return recipe.NewFastDrafts(s.model, recipe.FastDraftsActions{
		LoRADir: s.deps.LoRADir, Hub: s.deps.Hub, LoRAsChanged: func() { s.loras.Keep() },
		Ask: s.show, Parent: s.win, Do: s.deps.Do,
	})
}

// newUpscaling builds the learned upscalers' work (ui/upscale) on the window's model.
func (s *window) newUpscaling() *upscale.Upscaling {
	return upscale.New(s.model, upscale.Host{
		Settings:   func() settings.Settings { return s.deps.Settings },
		History:    func() *history.Store { return s.deps.History },
		Saved:      func(e history.Entry) { s.history.AddSession(e) },
		Stage:      func(text string) { s.progress.Stage.SetText(text) },
		Plan:       func(text string) { s.sheet.SetPlan(text) },
		ShowMemory: func(what string, p memplan.UpscalePrediction) { s.memory.ShowUpscale(what, p) },
		MemoryBack: s.draftChanged, // the memory panel predicts the draft again
		Running:    s.updateButtons,
		Ask:        s.show,
		Parent:     s.win,
		Now:        s.now,
		Do:         s.deps.Do,
	})
}

// cellMenu is the contact sheet's cell menu: Describe and Check (ui/prompthelp), then the
// upscales (ui/upscale).
func (s *window) cellMenu(c *gallery.Cell) *fyne.Menu {
	prompt := ""
	if c.Set != nil {
		prompt = c.Set.Prompt
	}
	label := fmt.Sprintf("Image %d", c.Index+1)
	m := s.help.ImageMenu(c.Final, prompt, fmt.Sprintf("batch image %d", c.Index+1), prompthelp.Key{Path: c.Path})
	m.Items = append(m.Items, fyne.NewMenuItemSeparator())
	m.Items = append(m.Items, s.upscales.CellItems(upscale.Source{Label: label, Image: kit.NRGBA(c.Final), Set: c.Set, Path: c.Path})...)
	return m
}
