package recipe

import (
	"path/filepath"
	"strings"

	"easel/engine/lora"
	"easel/engine/mmapfile"
	"easel/engine/safetensors"
)

// The LoRA section's file handling: adding files (chosen or dropped), turning them on and off,
// their strengths, removing them, a file's sampling preset; the list is kept through the
// shell's Save after each change.

// PresetOf reads a LoRA file's preset; a fault in its mapping (the file changed or went away
// while it was read) is an error, not the end of the app.
func PresetOf(path string) (pr *lora.Preset, err error) {
	defer mmapfile.Recover(&err)
	defer mmapfile.Guard()()
	st, err := safetensors.Open(path)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	sum := ""
	if _, ok := st.Metadata[lora.PresetMetadataKey]; !ok && (len(lora.KnownPresets) > 0 || lora.HasPresetFile(path)) {
		sum, _ = lora.Hashes(st.Bytes())
	}
	return lora.PresetForFile(path, st.Metadata, sum)
}

// Pick opens the file dialog for a .safetensors LoRA, starting in the LoRA folder.
func (p *LoRAs) Pick() {
	if p.act.Pick == nil {
		return
	}
	p.act.Pick([]string{".safetensors"}, p.act.Folder, func(path string) { p.Add([]string{path}) })
}

// Add adds LoRA files to the list (enabled, strength 1) and returns what to say about them: the
// files added and those the list already had.
func (p *LoRAs) Add(paths []string) string {
	var added, dup []string
	for _, path := range paths {
		if p.m.AddLoRA(path) {
			added = append(added, filepath.Base(path))
		} else {
			dup = append(dup, filepath.Base(path))
		}
	}
	p.Keep()
	var msg []string
	if len(added) > 0 {
		msg = append(msg, "LoRA added: "+strings.Join(added, ", ")+".")
	}
	if len(dup) > 0 {
		msg = append(msg, strings.Join(dup, ", ")+" is already in the list.")
	}
	return strings.Join(msg, " ")
}

// SetEnabled turns LoRA i on or off.
func (p *LoRAs) SetEnabled(i int, on bool) {
	if d := p.m.Draft(); i < len(d.LoRAs) && d.LoRAs[i].Enabled != on {
		p.m.EnableLoRA(i, on)
		p.Keep()
	}
}

// SetStrength changes a strength: nothing is reloaded (the pipeline keeps the file loaded).
func (p *LoRAs) SetStrength(i int, v float64) {
	if d := p.m.Draft(); i < len(d.LoRAs) && d.LoRAs[i].Strength != v {
		p.m.SetLoRAStrength(i, v)
		p.Keep()
	}
}

// Remove drops LoRA i.
func (p *LoRAs) Remove(i int) {
	p.m.RemoveLoRA(i)
	p.Keep()
}

// UsePreset applies a LoRA's sampling preset to the recipe and says so.
func (p *LoRAs) UsePreset(pr *lora.Preset) {
	p.m.UsePreset(pr)
	p.say("Using %s.", pr.Describe())
}

// Keep saves the list through the shell's Save, when it has one; a failure is said.
func (p *LoRAs) Keep() {
	if p.act.Save == nil {
		return
	}
	if err := p.act.Save(p.m.Draft().LoRAs); err != nil {
		p.say("The LoRA list was not saved: %v", err)
	}
}

func (p *LoRAs) say(format string, args ...any) {
	if p.act.Say != nil {
		p.act.Say(format, args...)
	}
}
