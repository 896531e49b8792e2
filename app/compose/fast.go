package compose

import (
	"easel/engine/lora"
)

// DraftMode is the "Draft / Final" switch's state: a fast few-step LoRA with its preset for
// drafts, the model's full schedule for the final pass.
type DraftMode struct {
	// On is the switch at Draft.
	On bool
	// LoRA is the few-step LoRA file drafts use, Preset its sampling.
	LoRA   string
	Preset *lora.Preset
	// finalSteps and finalCFG are the steps and CFG the final pass returns to.
	finalSteps int
	finalCFG   float64
}

// UseDrafts turns the switch to Draft with the few-step LoRA at path and its preset: the LoRA is
// enabled at strength 1 and the preset's steps, CFG and schedule apply. The steps and CFG in use
// before are what Final returns to.
func (d *Draft) UseDrafts(path string, p *lora.Preset) {
	if !d.Mode.On {
		d.Mode.finalSteps, d.Mode.finalCFG = d.Steps, d.CFG
	}
	d.Mode.On, d.Mode.LoRA, d.Mode.Preset = true, path, p
	d.AddLoRA(path)
	for i := range d.LoRAs {
		if d.LoRAs[i].Path == path {
			d.LoRAs[i].Enabled, d.LoRAs[i].Strength = true, 1
		}
	}
	if p != nil {
		d.UsePreset(p)
	}
}

// UseFinal turns the switch to Final: the few-step LoRA is disabled (it stays in the list), the
// preset is left, and the steps and CFG return to those in use before drafts (the model's full
// schedule).
func (d *Draft) UseFinal() {
	if !d.Mode.On {
		return
	}
	for i := range d.LoRAs {
		if d.LoRAs[i].Path == d.Mode.LoRA {
			d.LoRAs[i].Enabled = false
		}
	}
	if d.Preset == d.Mode.Preset {
		d.Preset = nil
	}
	d.Steps, d.CFG = d.Mode.finalSteps, d.Mode.finalCFG
	d.Mode.On = false
}

// FinalSteps is the number of steps the final pass uses: those Final returns to while the switch
// is at Draft, the draft's own otherwise.
func (d *Draft) FinalSteps() int {
	if d.Mode.On {
		return d.Mode.finalSteps
	}
	return d.Steps
}
