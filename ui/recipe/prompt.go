package recipe

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"

	"easel/ui/kit"
	"easel/ui/model"
)

// Prompt is the prompt panel: the prompt, the negative prompt (enabled only while CFG is on) and
// the transparent-background toggle. It shows the model's draft as it changes (a restore, an
// undo, CFG raised) and sets the draft's prompts as they are typed.
type Prompt struct {
	Box         fyne.CanvasObject
	Text        *PromptEntry
	Negative    *PromptEntry
	Transparent *widget.Check
	tip         *widget.Label
	m           *model.Window
}

// NewPrompt builds the panel over m's draft; its entries answer keys.
func NewPrompt(m *model.Window, keys Keys) *Prompt {
	p := &Prompt{m: m}
	p.Text = NewPromptEntry(keys)
	p.Text.SetPlaceHolder("Describe the image…")
	p.Text.SetMinRowsVisible(4)
	p.Negative = NewPromptEntry(keys)
	p.Negative.SetMinRowsVisible(2)
	p.Transparent = widget.NewCheck("Transparent background (RGBA)", nil)
	p.tip = widget.NewLabel("Adds Qwen's wording: “This is an RGBA image with transparency. … The image has alpha channel and the background is transparent.”")
	p.tip.Wrapping = fyne.TextWrapWord
	p.tip.Importance = widget.LowImportance
	p.tip.Hide()
	p.Box = container.NewVBox(
		kit.Heading("Prompt"), p.Text, p.Transparent, p.tip,
		kit.Heading("Negative prompt"), p.Negative,
	)
	p.show(m.Draft())
	p.Text.OnChanged = m.SetPrompt
	p.Negative.OnChanged = m.SetNegative
	p.Transparent.OnChanged = func(on bool) {
		m.SetTransparent(on)
		p.showTip(on)
	}
	m.Observe(model.DraftChanged, func(model.Change) { p.show(m.Draft()) })
	return p
}

// show puts the draft's prompts in the fields that differ (a field typed in keeps its cursor).
func (p *Prompt) show(d compose.Draft) {
	if p.Text.Text != d.Prompt {
		p.Text.SetText(d.Prompt)
	}
	if p.Negative.Text != d.Negative {
		p.Negative.SetText(d.Negative)
	}
	if p.Transparent.Checked != d.Transparent {
		p.Transparent.SetChecked(d.Transparent)
	}
	p.showTip(d.Transparent)
	p.setGuided(d.Guided())
}

func (p *Prompt) showTip(on bool) {
	if on {
		p.tip.Show()
	} else {
		p.tip.Hide()
	}
}

// setGuided enables the negative prompt only when CFG is on.
func (p *Prompt) setGuided(on bool) {
	if on == !p.Negative.Disabled() && p.Negative.PlaceHolder != "" {
		return
	}
	if on {
		p.Negative.Enable()
		p.Negative.SetPlaceHolder("What to steer away from")
	} else {
		p.Negative.Disable()
		p.Negative.SetPlaceHolder("Raise CFG above 1 to use a negative prompt")
	}
}
