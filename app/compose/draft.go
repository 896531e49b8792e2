package compose

import (
	"fmt"
	"path/filepath"
	"strings"

	"easel/app"
	"easel/app/imagefile"
	"easel/app/memplan"
	"easel/app/settings"
	"easel/engine/condimage"
	"easel/engine/lora"
	"easel/engine/pipeline"
)

// Draft is the generation being set up.
type Draft struct {
	Prompt, Negative string
	Transparent      bool
	Conditions       []Condition
	// Start is the picture to start from (nil: from noise); Job prepares it.
	Start *Start

	Size    SizeMode
	Aspect  Aspect
	Scale   Scale
	CustomW int
	CustomH int
	// Ratio is a free width/height ratio for SizeAuto (0: none).
	Ratio float64
	// Resolution is the output_resolution condition images and sizes from an aspect ratio are
	// computed for (0: the package's Resolution, the reference default).
	Resolution int
	// Steps and CFG are the sampling settings; 0 leaves each to the model's default.
	Steps      int
	CFG        float64
	RandomSeed bool
	Seed       uint64
	// NoiseSeed, when not nil, is the seed the noise is drawn from instead of Seed (restored from
	// an image that recorded one, or given; it applies while the run's seed is Seed); nil lets Job
	// move it off an edited image's own seed.
	NoiseSeed *uint64
	Backend   settings.Backend
	Model     string
	// LoRAs is the LoRA list (the enabled ones are applied); LoRADirs are the folders restoring an
	// image looks for its LoRA files in, by SHA-256 (the LoRA folder; the image's own is added).
	LoRAs    []LoRA
	LoRADirs []string
	// Preset is the few-step LoRA preset the artist chose to use (its schedule goes into the
	// request while the steps and CFG are still the preset's), or nil.
	Preset *lora.Preset
	// Mode is the "Draft / Final" switch (fast.go).
	Mode DraftMode
	// Count is the batch's images (0 or 1: one); VariationSeed and VariationStrength move the
	// starting noise towards another seed's (strength 0: none). See pipeline.Request.
	Count             int
	VariationSeed     uint64
	VariationStrength float64
}

// NewDraft starts from the persisted settings: their default size (as a preset when it is one,
// else custom), steps and CFG, a random seed.
func NewDraft(s settings.Settings) Draft {
	d := Draft{Size: SizeCustom, Aspect: Aspects[0], CustomW: s.Width, CustomH: s.Height,
		Steps: s.Steps, CFG: s.CFG, RandomSeed: true, Backend: s.Backend, Model: s.Model}
	for _, a := range Aspects {
		for _, sc := range []Scale{Scale1K, Scale2K} {
			if w, h := PresetSize(a, sc); w == s.Width && h == s.Height {
				d.Size, d.Aspect, d.Scale = SizePreset, a, sc
			}
		}
	}
	return d
}

// Guided reports whether CFG is on (scale above 1): the negative prompt is used.
func (d *Draft) Guided() bool { return d.CFG > 1 }

// PromptText is the prompt the model gets (with the RGBA wording when Transparent).
func (d *Draft) PromptText() string {
	if d.Transparent {
		return WithTransparency(d.Prompt)
	}
	return d.Prompt
}

// OutputSize is the image size the draft makes.
func (d *Draft) OutputSize() (int, int, error) {
	switch d.Size {
	case SizePreset:
		w, h := PresetSize(d.Aspect, d.Scale)
		return w, h, nil
	case SizeCustom:
		if d.CustomW <= 0 || d.CustomH <= 0 {
			return 0, 0, fmt.Errorf("give a width and a height (%d–%d pixels, multiples of %d)", MinSide, MaxSide, SizeMultiple)
		}
		return Snap(d.CustomW), Snap(d.CustomH), nil
	case SizeExact:
		return d.CustomW, d.CustomH, nil
	case SizeAuto:
		return 0, 0, nil // the pipeline's choice
	default:
		if d.Start != nil {
			return 0, 0, nil // the size follows the start image (Job)
		}
		if len(d.Conditions) == 0 {
			return 0, 0, fmt.Errorf("“from the last condition image” needs a condition image: add one or choose a preset")
		}
		last := d.Conditions[len(d.Conditions)-1].Image.Rect
		w, h := condimage.CalculateDimensions(float64(Resolution)*float64(Resolution), float64(last.Dx())/float64(last.Dy()))
		return w / SizeMultiple * SizeMultiple, h / SizeMultiple * SizeMultiple, nil
	}
}

// resolution is the draft's output_resolution.
func (d *Draft) resolution() int {
	if d.Resolution > 0 {
		return d.Resolution
	}
	return Resolution
}

// Request is the pipeline request for the draft with a given seed.
func (d *Draft) Request(seed uint64) (pipeline.Request, error) {
	w, h, err := d.OutputSize()
	if err != nil {
		return pipeline.Request{}, err
	}
	r := pipeline.Request{Prompt: d.PromptText(), Width: w, Height: h, Steps: d.Steps, CFG: d.CFG, Seed: seed, Resolution: d.resolution()}
	if d.Size == SizeAuto {
		r.Aspect = d.Ratio
	}
	switch {
	case d.Guided() || d.CFG == 0: // 0: the model's scale, which may use it
		r.NegativePrompt = d.Negative
	default:
		r.CFG = 1
	}
	for _, c := range d.Conditions {
		r.Images = append(r.Images, c.Image)
	}
	r.LoRAFiles = d.loraFiles()
	r.Count, r.VariationSeed, r.VariationStrength = d.Count, d.VariationSeed, d.VariationStrength
	d.applyPreset(&r)
	return r, nil
}

// Plan is the memory plan of the draft.
func (d *Draft) Plan() (memplan.Plan, error) {
	w, h, err := d.OutputSize()
	if err != nil {
		return memplan.Plan{}, err
	}
	if w == 0 && d.Start != nil {
		if j, err := d.Job(0); err == nil {
			w, h = j.Request.Width, j.Request.Height
		}
	}
	p := memplan.Plan{Width: w, Height: h, PromptBytes: len(d.PromptText()), CFG: d.Guided(), LoRABytes: d.loraBytes(), Count: d.Count, Init: d.Start != nil}
	for _, c := range d.Conditions {
		p.Conditions = append(p.Conditions, [2]int{c.EncodedW, c.EncodedH})
	}
	return p, nil
}

// FileSettings are what the PNG stores for a finished run of this draft.
func (d *Draft) FileSettings(res *pipeline.Result) *imagefile.Settings {
	s := &imagefile.Settings{Prompt: d.PromptText(), Width: res.Width, Height: res.Height, Steps: res.Steps,
		CFG: res.CFG, Seed: res.Seed, Sigmas: res.Sigmas, Resolution: res.Resolution, Sampler: "Euler",
		Model: filepath.Base(d.Model), EaselVersion: app.Version, Backend: string(d.Backend)}
	if res.CFG > 1 { // the negative prompt only when CFG used it
		s.NegativePrompt = d.Negative
	}
	for _, c := range d.Conditions {
		s.Images = append(s.Images, imagefile.ImageRef{Name: c.Name, SHA256: c.SHA256})
	}
	s.LoRAs = loraRefs(res.LoRAs)
	if d.Start != nil {
		s.Init = d.Start.settings(d.Size != SizeAuto && d.Size != SizeFromImage)
		s.InitImage, s.MaskImage = d.Start.Image, d.Start.Mask
	}
	s.VariationSeed, s.VariationStrength = res.VariationSeed, res.VariationStrength
	s.NoiseSeed = res.NoiseSeed
	return s
}

// Restore sets the draft's prompts, size, steps, CFG and seed (fixed) from a stored image's
// settings. Condition images are not restored (the PNG names them, it does not hold them); the
// returned note says so when the image had any.
func (d *Draft) Restore(s *imagefile.Settings) (note string) {
	if desc, ok := WithoutTransparency(s.Prompt); ok {
		d.Prompt, d.Transparent = desc, true
	} else {
		d.Prompt, d.Transparent = s.Prompt, false
	}
	d.Negative = s.NegativePrompt
	d.Steps, d.CFG = s.Steps, s.CFG
	d.Seed, d.RandomSeed, d.NoiseSeed = s.Seed, false, s.NoiseSeed
	d.VariationSeed, d.VariationStrength, d.Count = s.VariationSeed, s.VariationStrength, 1
	d.setSize(s.Width, s.Height)
	d.Start = StartFromSettings(s)
	if d.Start != nil && (s.Init.Fit == "" || d.Start.MaskCrop) {
		d.Size = SizeFromImage // the size follows the start image again
	}
	loraNote := d.restoreLoRAs(s.LoRAs)
	// The condition images are the image's, not the ones in the list before (restore_conditions.go).
	return strings.TrimSpace(d.restoreConditions(s.Images) + "\n" + loraNote)
}

// setSize chooses w×h: as a preset when it is one, else as a custom size.
func (d *Draft) setSize(w, h int) {
	d.Size, d.CustomW, d.CustomH = SizeCustom, w, h
	for _, a := range Aspects {
		for _, sc := range []Scale{Scale1K, Scale2K} {
			if pw, ph := PresetSize(a, sc); pw == w && ph == h {
				d.Size, d.Aspect, d.Scale = SizePreset, a, sc
			}
		}
	}
}
