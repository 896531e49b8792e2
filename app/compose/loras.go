package compose

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"easel/app/imagefile"
	"easel/app/loralib"
	"easel/app/settings"
	"easel/engine/lora"
	"easel/engine/pipeline"
	"easel/engine/sched"
)

// LoRA is one entry of the draft's LoRA list.
type LoRA = settings.LoRA

// AddLoRA appends a LoRA file (enabled, strength 1) unless the list has it; it reports whether
// it was added.
func (d *Draft) AddLoRA(path string) bool {
	for _, l := range d.LoRAs {
		if l.Path == path {
			return false
		}
	}
	d.LoRAs = append(d.LoRAs, LoRA{Path: path, Enabled: true, Strength: 1})
	return true
}

// RemoveLoRA drops entry i.
func (d *Draft) RemoveLoRA(i int) {
	if i >= 0 && i < len(d.LoRAs) {
		d.LoRAs = append(d.LoRAs[:i:i], d.LoRAs[i+1:]...)
	}
}

// loraFiles are the enabled LoRAs as the pipeline takes them.
func (d *Draft) loraFiles() []pipeline.LoRAFile {
	var out []pipeline.LoRAFile
	for _, l := range d.LoRAs {
		if l.Enabled {
			out = append(out, pipeline.LoRAFile{Path: l.Path, Strength: l.Strength})
		}
	}
	return out
}

// loraBytes estimates the memory the enabled LoRAs hold: their files' sizes (the factors are
// kept in the file's precision).
func (d *Draft) loraBytes() int64 {
	var n int64
	for _, l := range d.LoRAs {
		if l.Enabled {
			if st, err := os.Stat(l.Path); err == nil {
				n += st.Size()
			}
		}
	}
	return n
}

// loraRefs are the LoRAs a run applied, as the image records them.
func loraRefs(used []pipeline.LoRAUsed) []imagefile.LoRARef {
	var out []imagefile.LoRARef
	for _, u := range used {
		out = append(out, imagefile.LoRARef{Name: filepath.Base(u.Path), SHA256: u.SHA256, ShortHash: u.ShortHash, Strength: u.Strength})
	}
	return out
}

// restoreLoRAs makes the image's LoRAs the enabled ones, at its strengths, finding each file by
// its SHA-256 in d.LoRADirs (the LoRA folder, beside the image); list entries it did not use are
// disabled. Files already in the list are tried first. The note names the ones not found.
func (d *Draft) restoreLoRAs(refs []imagefile.LoRARef) string {
	var listed []string
	for i := range d.LoRAs {
		d.LoRAs[i].Enabled = false
		listed = append(listed, d.LoRAs[i].Path)
	}
	if len(refs) == 0 {
		return ""
	}
	found, missing := loralib.Find(refs, listed, d.LoRADirs)
	for i, path := range found {
		if path == "" {
			continue
		}
		strength := min(max(refs[i].Strength, settings.MinLoRAStrength), settings.MaxLoRAStrength)
		d.AddLoRA(path)
		for j := range d.LoRAs {
			if d.LoRAs[j].Path == path {
				d.LoRAs[j].Enabled, d.LoRAs[j].Strength = true, strength
			}
		}
	}
	if len(missing) == 0 {
		return ""
	}
	var names []string
	for _, m := range missing {
		names = append(names, m.Name)
	}
	where := "the LoRA folder"
	if len(d.LoRADirs) > 0 {
		where = strings.Join(d.LoRADirs, " or ")
	}
	return fmt.Sprintf("This image was made with LoRAs that were not found in %s (by SHA-256): %s. Put them there and restore again.", where, strings.Join(names, ", "))
}

// UsePreset sets the draft's steps and CFG from a LoRA's preset and keeps its schedule for the
// requests made while the steps and CFG are still the preset's (changing either by hand leaves
// the preset).
func (d *Draft) UsePreset(p *lora.Preset) {
	steps, cfg, sigmas, _ := loralib.PresetSettings(p, sched.DefaultConfig())
	if sigmas != nil {
		steps = len(sigmas)
	}
	d.Preset, d.Steps, d.CFG = p, steps, cfg
}

// applyPreset puts the preset's schedule into a request while the draft still uses it: the
// fixed grid (Turbo) or the no-terminal-stretch shift (Lightning) over the published scheduler.
func (d *Draft) applyPreset(r *pipeline.Request) {
	if d.Preset == nil {
		return
	}
	steps, cfg, sigmas, scheduler := loralib.PresetSettings(d.Preset, sched.DefaultConfig())
	if sigmas != nil {
		steps = len(sigmas)
	}
	if d.Steps != steps || d.CFG != cfg {
		return
	}
	r.Sigmas, r.Scheduler = sigmas, scheduler
	if sigmas != nil {
		r.Steps = 0
	}
}
