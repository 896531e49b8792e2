package lora

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Preset is the sampling a few-step LoRA was distilled for (lora.md §4.2): its steps, CFG and
// schedule.
type Preset struct {
	Name  string  `json:"name"`
	Steps int     `json:"steps"`
	CFG   float64 `json:"cfg"`
	// Schedule is "turbo" (the fixed grid of qi21-spec §5.5, or Sigmas), "lightning" (the
	// step-count schedule with dynamic exponential shifting and no terminal stretch) or
	// "default" (the model's own schedule at Steps).
	Schedule string `json:"schedule"`
	// Sigmas is a fixed grid (without the terminal 0) for the "turbo" schedule; nil means the
	// Turbo grid.
	Sigmas []float64 `json:"sigmas,omitempty"`
	// Source says where the preset came from: "metadata", "known file" or "preset file".
	Source string `json:"-"`
}

// PresetMetadataKey is the safetensors __metadata__ key Easel reads a preset from: a JSON Preset.
// No published Qwen-Image-2.1 LoRA's metadata is known (lora.md §4.1 lists it as an open item),
// so this is Easel's own key; files without it fall back to KnownPresets.
const PresetMetadataKey = "easel_preset"

// KnownPresets maps a LoRA file's SHA-256 (lower-case hex) to its preset. It is empty: the
// published few-step LoRAs' sampling settings are known (lora.md §4.2) but not their files'
// hashes, and an entry is only added for a hash taken from the real file.
var KnownPresets = map[string]Preset{}

// PresetFor is the preset of a LoRA file: from its metadata, else from KnownPresets by its
// SHA-256, else nil. A malformed preset in the metadata is an error naming the key.
func PresetFor(meta map[string]string, sha256 string) (*Preset, error) {
	if js, ok := meta[PresetMetadataKey]; ok {
		var p Preset
		if err := json.Unmarshal([]byte(js), &p); err != nil {
			return nil, fmt.Errorf("lora: the %s metadata is not a preset (%v): fix or remove it", PresetMetadataKey, err)
		}
		if err := p.check(); err != nil {
			return nil, err
		}
		p.Source = "metadata"
		return &p, nil
	}
	if p, ok := KnownPresets[strings.ToLower(sha256)]; ok {
		p.Source = "known file"
		return &p, nil
	}
	return nil, nil
}

func (p *Preset) check() error {
	switch p.Schedule {
	case "", "default", "lightning", "turbo":
	default:
		return fmt.Errorf("lora: preset schedule %q: want turbo, lightning or default", p.Schedule)
	}
	if p.Schedule == "turbo" && p.Sigmas != nil {
		p.Steps = len(p.Sigmas)
	}
	if p.Steps < 1 || p.Steps > 200 || p.CFG < 0 || p.CFG > 20 {
		return fmt.Errorf("lora: preset of %d steps at CFG %g: want 1–200 steps and CFG 0–20", p.Steps, p.CFG)
	}
	for i, s := range p.Sigmas {
		if !(s > 0 && s <= 1) || (i > 0 && s >= p.Sigmas[i-1]) {
			return fmt.Errorf("lora: preset sigma %d is %g: a grid falls from at most 1 towards 0", i, s)
		}
	}
	if p.CFG == 0 {
		p.CFG = 1
	}
	return nil
}

// Describe is the preset in a few words, for the window and the CLI.
func (p *Preset) Describe() string {
	s := fmt.Sprintf("%d steps, CFG %g", p.Steps, p.CFG)
	switch p.Schedule {
	case "turbo":
		s += ", the Turbo sigma grid"
	case "lightning":
		s += ", Lightning schedule (no terminal stretch)"
	}
	if p.Name != "" {
		s = p.Name + ": " + s
	}
	return s
}

// PresetFileSuffix names the preset file Easel writes beside a LoRA it downloaded
// ("NAME.safetensors" + ".preset.json"): the sampling its publisher documents, bound to the
// file's SHA-256 as the hub gave it, so the preset follows that file only.
const PresetFileSuffix = ".preset.json"

// presetFile is the preset file's content.
type presetFile struct {
	SHA256 string `json:"sha256"`
	Preset Preset `json:"preset"`
}

// WritePresetFile writes the preset file beside the LoRA at loraPath, for the file whose SHA-256
// is sha256.
func WritePresetFile(loraPath, sha256 string, p Preset) error {
	if err := p.check(); err != nil {
		return err
	}
	js, err := json.MarshalIndent(presetFile{SHA256: strings.ToLower(sha256), Preset: p}, "", "  ")
	if err != nil {
		return err
	}
	tmp := loraPath + PresetFileSuffix + ".tmp"
	if err := os.WriteFile(tmp, append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("lora: writing the preset beside %s: %v", filepath.Base(loraPath), err)
	}
	if err := os.Rename(tmp, loraPath+PresetFileSuffix); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("lora: writing the preset beside %s: %v", filepath.Base(loraPath), err)
	}
	return nil
}

// HasPresetFile reports whether a preset file lies beside the LoRA at loraPath (its hash then
// decides whether it applies: PresetForFile).
func HasPresetFile(loraPath string) bool {
	_, err := os.Stat(loraPath + PresetFileSuffix)
	return err == nil
}

// PresetForFile is PresetFor, then the preset file beside loraPath when its recorded SHA-256 is
// the file's (a file replaced by another keeps no stale preset). A preset file that cannot be
// read is an error naming it.
func PresetForFile(loraPath string, meta map[string]string, sha256 string) (*Preset, error) {
	p, err := PresetFor(meta, sha256)
	if p != nil || err != nil || sha256 == "" {
		return p, err
	}
	js, err := os.ReadFile(loraPath + PresetFileSuffix)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lora: the preset file beside %s cannot be read: %v", filepath.Base(loraPath), err)
	}
	var f presetFile
	if err := json.Unmarshal(js, &f); err != nil {
		return nil, fmt.Errorf("lora: %s is not a preset file (%v): delete it or download the LoRA again", filepath.Base(loraPath)+PresetFileSuffix, err)
	}
	if !strings.EqualFold(f.SHA256, sha256) {
		return nil, nil
	}
	if err := f.Preset.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(loraPath)+PresetFileSuffix, err)
	}
	f.Preset.Source = "preset file"
	return &f.Preset, nil
}
