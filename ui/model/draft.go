package model

import (
	"easel/app/compose"
	"easel/app/imagefile"
	"easel/app/settings"
	"easel/engine/lora"
)

// The draft is the recipe the next Generate makes: the prompts, the size, the steps, the CFG, the
// seed, the condition images and the LoRAs (the start image is the canvas document's). Every
// action below that changes it tells the DraftChanged observers; setting a value it already has
// tells no one, so a panel that shows the draft can set its widgets without echoing back.

// Draft is the draft as it is now: a copy, whose lists the caller may change without changing the
// model.
func (w *Window) Draft() compose.Draft {
	d := w.draft
	d.Conditions = append([]compose.Condition(nil), d.Conditions...)
	d.LoRAs = append([]compose.LoRA(nil), d.LoRAs...)
	d.LoRADirs = append([]string(nil), d.LoRADirs...)
	return d
}

// ReplaceDraft puts a whole draft back (undo, the settings' defaults).
func (w *Window) ReplaceDraft(d compose.Draft) {
	w.draft = d
	w.changed(DraftChanged)
}

// edit changes the draft with f and tells the observers when f reports a change.
func (w *Window) edit(f func(d *compose.Draft) bool) {
	if f(&w.draft) {
		w.changed(DraftChanged)
	}
}

// set makes *field v, reporting whether it changed.
func set[T comparable](field *T, v T) bool {
	if *field == v {
		return false
	}
	*field = v
	return true
}

// SetPrompt sets the prompt.
func (w *Window) SetPrompt(p string) {
	w.edit(func(d *compose.Draft) bool { return set(&d.Prompt, p) })
}

// SetNegative sets the negative prompt.
func (w *Window) SetNegative(n string) {
	w.edit(func(d *compose.Draft) bool { return set(&d.Negative, n) })
}

// SetTransparent asks for (or stops asking for) a transparent background.
func (w *Window) SetTransparent(on bool) {
	w.edit(func(d *compose.Draft) bool { return set(&d.Transparent, on) })
}

// SetSteps sets the number of steps (changing it by hand leaves a LoRA preset's schedule:
// compose.Draft.Request).
func (w *Window) SetSteps(n int) {
	w.edit(func(d *compose.Draft) bool { return set(&d.Steps, n) })
}

// SetCount sets how many images a Generate makes.
func (w *Window) SetCount(n int) {
	w.edit(func(d *compose.Draft) bool { return set(&d.Count, n) })
}

// SetCFG sets the CFG scale (1 or less: off).
func (w *Window) SetCFG(v float64) {
	w.edit(func(d *compose.Draft) bool { return set(&d.CFG, v) })
}

// SetRandomSeed chooses a new seed for every run (true) or the draft's Seed (false).
func (w *Window) SetRandomSeed(on bool) {
	w.edit(func(d *compose.Draft) bool { return set(&d.RandomSeed, on) })
}

// SetSeed sets the fixed seed.
func (w *Window) SetSeed(n uint64) {
	w.edit(func(d *compose.Draft) bool { return set(&d.Seed, n) })
}

// FixSeed fixes the seed and the variation a run used (Vary, "Use this seed").
func (w *Window) FixSeed(seed, variationSeed uint64, strength float64) {
	w.edit(func(d *compose.Draft) bool {
		c := set(&d.Seed, seed)
		c = set(&d.RandomSeed, false) || c
		c = set(&d.VariationSeed, variationSeed) || c
		return set(&d.VariationStrength, strength) || c
	})
}

// SetScale sets a preset size's scale (1K, 2K).
func (w *Window) SetScale(sc compose.Scale) {
	w.edit(func(d *compose.Draft) bool { return set(&d.Scale, sc) })
}

// SetPresetSize chooses a preset aspect (its scale stays).
func (w *Window) SetPresetSize(a compose.Aspect) {
	w.edit(func(d *compose.Draft) bool {
		c := set(&d.Size, compose.SizePreset)
		return set(&d.Aspect, a) || c
	})
}

// SetSizeMode chooses how the size is given (custom sides, follow the start image) keeping the
// sides there are.
func (w *Window) SetSizeMode(m compose.SizeMode) {
	w.edit(func(d *compose.Draft) bool { return set(&d.Size, m) })
}

// SetCustomSize chooses custom sides w×h.
func (w *Window) SetCustomSize(width, height int) {
	w.edit(func(d *compose.Draft) bool {
		c := set(&d.Size, compose.SizeCustom)
		c = set(&d.CustomW, width) || c
		return set(&d.CustomH, height) || c
	})
}

// SetCustomSides changes the custom sides without choosing the custom size (a field typed while
// another size is chosen).
func (w *Window) SetCustomSides(width, height int) {
	w.edit(func(d *compose.Draft) bool {
		c := set(&d.CustomW, width)
		return set(&d.CustomH, height) || c
	})
}

// SetBackend sets the backend the draft's memory plan and requests are for.
func (w *Window) SetBackend(b settings.Backend) {
	w.edit(func(d *compose.Draft) bool { return set(&d.Backend, b) })
}

// SetModel sets the model file.
func (w *Window) SetModel(path string) {
	w.edit(func(d *compose.Draft) bool { return set(&d.Model, path) })
}

// Restore takes a stored image's prompts, size, steps, CFG, seed, conditions and LoRAs, looking
// for its LoRA files in dirs (compose.Draft.Restore); the start image it names is the canvas
// document's, so the draft keeps none. It returns what the artist should know.
func (w *Window) Restore(s *imagefile.Settings, dirs []string) (note string) {
	w.draft.LoRADirs = dirs
	note = w.draft.Restore(s)
	w.afterRestore(s)
	w.changed(DraftChanged)
	return note
}

// RestoreFile takes what a PNG of another program records (compose.Draft.RestoreFile), looking
// for LoRA files in dirs; ok is false when it records nothing Easel can use.
func (w *Window) RestoreFile(md *imagefile.Metadata, dirs []string) (note string, ok bool) {
	w.draft.LoRADirs = dirs
	note, ok = w.draft.RestoreFile(md)
	w.afterRestore(md.Settings)
	w.changed(DraftChanged)
	return note, ok
}

// afterRestore takes the start image out of the restored draft (the canvas document holds it), and
// a size that followed the image becomes the custom size it made, unless conditions size it.
func (w *Window) afterRestore(s *imagefile.Settings) {
	d := &w.draft
	d.Start = nil
	if s == nil || s.Init == nil {
		return
	}
	if d.Size == compose.SizeFromImage && len(d.Conditions) == 0 {
		d.Size, d.CustomW, d.CustomH = compose.SizeCustom, s.Width, s.Height
	}
}

// Resume takes the draft the last session kept (compose.Draft.Resume).
func (w *Window) Resume(s settings.Draft) {
	w.draft.Resume(s)
	w.changed(DraftChanged)
}

// Saved is the draft as the draft store keeps it between launches (without the canvas).
func (w *Window) Saved() settings.Draft { return w.draft.Saved() }

// AddCondition appends a condition image (refusing an eleventh: the error says so).
func (w *Window) AddCondition(c compose.Condition) error {
	if err := w.draft.Add(c); err != nil {
		return err
	}
	w.changed(DraftChanged)
	return nil
}

// MoveCondition moves condition i by delta places (−1 left, +1 right).
func (w *Window) MoveCondition(i, delta int) {
	w.draft.Move(i, delta)
	w.changed(DraftChanged)
}

// RemoveCondition drops condition i.
func (w *Window) RemoveCondition(i int) {
	w.draft.Remove(i)
	w.changed(DraftChanged)
}

// AddLoRA adds a LoRA file (enabled, strength 1) unless the list has it; it reports whether it
// was added.
func (w *Window) AddLoRA(path string) bool {
	if !w.draft.AddLoRA(path) {
		return false
	}
	w.changed(DraftChanged)
	return true
}

// RemoveLoRA drops LoRA i.
func (w *Window) RemoveLoRA(i int) {
	w.draft.RemoveLoRA(i)
	w.changed(DraftChanged)
}

// EnableLoRA turns LoRA i on or off.
func (w *Window) EnableLoRA(i int, on bool) {
	w.edit(func(d *compose.Draft) bool { return i >= 0 && i < len(d.LoRAs) && set(&d.LoRAs[i].Enabled, on) })
}

// SetLoRAStrength sets LoRA i's strength.
func (w *Window) SetLoRAStrength(i int, v float64) {
	w.edit(func(d *compose.Draft) bool { return i >= 0 && i < len(d.LoRAs) && set(&d.LoRAs[i].Strength, v) })
}

// SetLoRAs replaces the LoRA list (the LoRA store's at launch).
func (w *Window) SetLoRAs(ls []compose.LoRA) {
	w.draft.LoRAs = append([]compose.LoRA(nil), ls...)
	w.changed(DraftChanged)
}

// UsePreset takes a LoRA preset's steps, CFG and schedule (compose.Draft.UsePreset).
func (w *Window) UsePreset(p *lora.Preset) {
	w.draft.UsePreset(p)
	w.changed(DraftChanged)
}

// UseDrafts turns the Draft / Final switch to Draft with the few-step LoRA at path and its
// preset (compose.Draft.UseDrafts).
func (w *Window) UseDrafts(path string, p *lora.Preset) {
	w.draft.UseDrafts(path, p)
	w.changed(DraftChanged)
}

// UseFinal turns the switch to Final (compose.Draft.UseFinal).
func (w *Window) UseFinal() {
	w.draft.UseFinal()
	w.changed(DraftChanged)
}
