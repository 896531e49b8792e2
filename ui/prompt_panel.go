package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"

	"easel/ui/kit"
)

// promptPanel holds the prompt, the negative prompt and the transparent-background toggle.
type promptPanel struct {
	prompt      *promptEntry
	negative    *promptEntry
	transparent *widget.Check
	box         fyne.CanvasObject
}

func newPromptPanel(s *window) *promptPanel {
	p := &promptPanel{}
	p.prompt = newPromptEntry(s)
	p.prompt.SetPlaceHolder("Describe the image…")
	p.prompt.SetMinRowsVisible(4)
	p.prompt.OnChanged = func(t string) { s.draft.Prompt = t; s.draftChanged() }
	p.negative = newPromptEntry(s)
	p.negative.SetMinRowsVisible(2)
	p.negative.OnChanged = func(t string) { s.draft.Negative = t }
	p.transparent = widget.NewCheck("Transparent background (RGBA)", nil)
	tip := widget.NewLabel("Adds Qwen's wording: “This is an RGBA image with transparency. … The image has alpha channel and the background is transparent.”")
	tip.Wrapping = fyne.TextWrapWord
	tip.Importance = widget.LowImportance
	tip.Hide()
	p.transparent.OnChanged = func(on bool) {
		s.draft.Transparent = on
		if on {
			tip.Show()
		} else {
			tip.Hide()
		}
		s.draftChanged()
	}
	p.box = container.NewVBox(
		kit.Heading("Prompt"), p.prompt, p.transparent, tip,
		kit.Heading("Negative prompt"), p.negative,
	)
	p.setGuided(s.draft.Guided())
	return p
}

// setGuided enables the negative prompt only when CFG is on.
func (p *promptPanel) setGuided(on bool) {
	if on {
		p.negative.Enable()
		p.negative.SetPlaceHolder("What to steer away from")
	} else {
		p.negative.Disable()
		p.negative.SetPlaceHolder("Raise CFG above 1 to use a negative prompt")
	}
}

// load shows a draft's prompts (after a restore).
func (p *promptPanel) load(d *compose.Draft) {
	p.prompt.SetText(d.Prompt)
	p.negative.SetText(d.Negative)
	p.transparent.SetChecked(d.Transparent)
	p.setGuided(d.Guided())
}
