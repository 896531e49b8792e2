package compose

import (
	"fmt"
	"strings"

	"easel/app/imagefile"
)

// RestoreFile sets the draft from the settings a PNG carries: Easel's own (everything Restore
// restores), else another tool's A1111 "parameters" text (the prompts, and the steps, CFG, seed
// and size it gives; what it leaves out stays as it was). ok is false when the file carries
// neither, and the draft is unchanged. The note says what the artist should know (condition images
// to add again, a size snapped to what the model makes).
func (d *Draft) RestoreFile(md *imagefile.Metadata) (note string, ok bool) {
	if !CarriesSettings(md) {
		return "", false
	}
	if md.Settings != nil {
		return d.Restore(md.Settings), true
	}
	return d.restoreParameters(imagefile.ParseParameters(md.Parameters)), true
}

// CarriesSettings reports whether RestoreFile would restore anything from md: Easel's settings,
// or a parameters text that gives at least a prompt or one setting.
func CarriesSettings(md *imagefile.Metadata) bool {
	return md != nil && (md.Settings != nil || md.Parameters != "" && !imagefile.ParseParameters(md.Parameters).Empty())
}

// The ranges the window's steps field and CFG slider take; another tool's values are brought
// into them.
const (
	minSteps = 2
	maxSteps = 200
	maxCFG   = 10
)

// restoreParameters applies what another tool's parameters text gives.
func (d *Draft) restoreParameters(p imagefile.ForeignParameters) string {
	if desc, ok := WithoutTransparency(p.Prompt); ok {
		d.Prompt, d.Transparent = desc, true
	} else {
		d.Prompt, d.Transparent = p.Prompt, false
	}
	d.Negative = p.NegativePrompt
	d.Conditions = nil // another tool's image was made without Easel's condition images
	var notes []string
	if p.Steps > 0 {
		d.Steps = min(max(p.Steps, minSteps), maxSteps)
		if d.Steps != p.Steps {
			notes = append(notes, fmt.Sprintf("its %d steps became %d (Easel takes %d–%d)", p.Steps, d.Steps, minSteps, maxSteps))
		}
	}
	if p.CFG > 0 {
		d.CFG = min(max(p.CFG, 1), maxCFG)
		if d.CFG != p.CFG {
			notes = append(notes, fmt.Sprintf("its CFG scale %g became %g (Easel takes 1–%g)", p.CFG, d.CFG, float64(maxCFG)))
		}
	}
	if p.HasSeed {
		d.Seed, d.RandomSeed = p.Seed, false
	}
	if p.Width > 0 && p.Height > 0 {
		w, h := Snap(p.Width), Snap(p.Height)
		d.setSize(w, h)
		if w != p.Width || h != p.Height {
			notes = append(notes, fmt.Sprintf("its size %d×%d became %d×%d (sides of %d–%d pixels in multiples of %d)", p.Width, p.Height, w, h, MinSide, MaxSide, SizeMultiple))
		}
	}
	if len(p.LoRAs) > 0 {
		var names []string
		for _, l := range p.LoRAs {
			names = append(names, fmt.Sprintf("%s at %g", l.Name, l.Strength))
		}
		notes = append(notes, fmt.Sprintf("it names LoRAs (%s) but not their files' full hashes: add them with Add LoRA… and set their strengths", strings.Join(names, ", ")))
	}
	if p.Sampler != "" && p.Sampler != "Euler" {
		notes = append(notes, fmt.Sprintf("its sampler %q is not Easel's (Easel samples with Euler)", p.Sampler))
	}
	if len(notes) == 0 {
		return ""
	}
	return "From another tool: " + strings.Join(notes, "; ") + "."
}
