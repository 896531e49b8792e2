package ui

import (
	"path/filepath"
	"strings"

	"easel/engine/lora"
	"easel/engine/mmapfile"
	"easel/engine/safetensors"
)

// presetOf reads a LoRA file's preset; a fault in its mapping (the file changed or went away
// while it was read) is an error, not the end of the app.
func presetOf(path string) (pr *lora.Preset, err error) {
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

// pickLoRA opens a file dialog for a .safetensors LoRA, starting in the LoRA folder.
func (s *window) pickLoRA() {
	s.pickFile([]string{".safetensors"}, s.deps.LoRADir, func(path string) { s.addLoRAs([]string{path}) })
}

// addLoRAs adds LoRA files to the list (enabled, strength 1).
func (s *window) addLoRAs(paths []string) string {
	var added, dup []string
	for _, path := range paths {
		if s.model.AddLoRA(path) {
			added = append(added, filepath.Base(path))
		} else {
			dup = append(dup, filepath.Base(path))
		}
	}
	s.lorasChanged()
	var msg []string
	if len(added) > 0 {
		msg = append(msg, "LoRA added: "+strings.Join(added, ", ")+".")
	}
	if len(dup) > 0 {
		msg = append(msg, strings.Join(dup, ", ")+" is already in the list.")
	}
	return strings.Join(msg, " ")
}

func (s *window) setLoRAEnabled(i int, on bool) {
	if d := s.draft(); i < len(d.LoRAs) && d.LoRAs[i].Enabled != on {
		s.model.EnableLoRA(i, on)
		s.lorasChanged()
	}
}

// setLoRAStrength changes a strength: nothing is reloaded (the pipeline keeps the file loaded).
func (s *window) setLoRAStrength(i int, v float64) {
	if d := s.draft(); i < len(d.LoRAs) && d.LoRAs[i].Strength != v {
		s.model.SetLoRAStrength(i, v)
		s.persistLoRAs()
	}
}

func (s *window) removeLoRA(i int) {
	s.model.RemoveLoRA(i)
	s.lorasChanged()
}

// lorasChanged saves the list and re-predicts memory (the section follows the draft itself).
func (s *window) lorasChanged() {
	s.persistLoRAs()
	s.draftChanged()
}

// persistLoRAs saves the list when the window has a store.
func (s *window) persistLoRAs() {
	if s.deps.LoRAStore == nil {
		return
	}
	if err := s.deps.LoRAStore.Save(s.draft().LoRAs); err != nil {
		s.say("The LoRA list was not saved: %v", err)
	}
}

// usePreset applies a LoRA's sampling preset to the controls.
func (s *window) usePreset(pr *lora.Preset) {
	s.model.UsePreset(pr)
	s.draftChanged()
	s.say("Using %s.", pr.Describe())
}
