package batch

import (
	"fmt"
	"image"
	"time"

	"easel/app/compose"
	"easel/app/hires"
	"easel/app/imagefile"

	"easel/ui/gallery"
	"easel/ui/model"
)

// cellDraft is the draft a cell's batch was made from (its tab's, else the live batch's).
func (r *Region) cellDraft(c *gallery.Cell) compose.Draft {
	if d, ok := c.Draft(); ok {
		return d
	}
	return r.draft
}

// remake is d, the draft of c's batch, set to remake c's image: its seed and variation, one image.
func remake(c *gallery.Cell, d compose.Draft) compose.Draft {
	base := d
	d.Conditions = append([]compose.Condition(nil), d.Conditions...)
	d.LoRAs = append([]compose.LoRA(nil), d.LoRAs...)
	d.Seed, d.RandomSeed, d.Count = c.Seed, false, 1
	d.VariationSeed, d.VariationStrength = 0, 0
	if c.Varies {
		d.VariationSeed, d.VariationStrength = c.Variation, base.VariationStrength
	}
	return d
}

// Vary makes a batch of variations around a cell's image (d: the draft its batch was made
// from): its seed, variation seeds counted up from a random one, at strength (A1111's
// semantics); as many as the recipe's count (4 when it makes one).
func (r *Region) Vary(c *gallery.Cell, from compose.Draft, strength float64) {
	d := remake(c, from)
	if c.Varies {
		// A variation of a variation: vary around its base seed with its variation seed first.
		d.VariationSeed = c.Variation
	} else {
		d.VariationSeed = r.shell.RandomSeed()
	}
	d.VariationStrength = strength
	d.Count = max(r.model.Draft().Count, 4)
	if r.shell.Submit(d, VaryKind, nil) {
		r.model.Say(model.NoticeInfo, "Making %d variations of seed %d at strength %.2f.", d.Count, d.Seed, strength)
	}
}

// SecondPass offers to refine a cell's image (factor 1: at its own size) or upscale it (×1.5,
// ×2), d the draft its batch was made from: resized with Lanczos or the learned upscaler
// Settings chooses, then an image-to-image pass at hires.DefaultStrength with the batch's
// prompt, condition images and LoRAs and the image's seed. The offer (size, the steps it runs,
// the time expected, whether it fits) comes first; the pass starts on confirm.
func (r *Region) SecondPass(c *gallery.Cell, from compose.Draft, factor float64) {
	img, ok := c.Final.(*image.NRGBA)
	if !ok {
		return
	}
	d := remake(c, from)
	w, h := img.Rect.Dx(), img.Rect.Dy()
	what := "Refine"
	steps := hires.Steps(d.Steps, hires.DefaultStrength)
	offer := fmt.Sprintf("Refine image %d: %d×%d, %d steps at strength %.2f", c.Index+1, w, h, steps, hires.DefaultStrength)
	if t := r.shell.StepTime(); t > 0 {
		offer += fmt.Sprintf(", about %s", (t * time.Duration(steps)).Round(time.Second))
	}
	if factor > 1 {
		what = fmt.Sprintf("Upscale ×%g", factor)
		plan, err := d.Plan()
		if err != nil {
			r.model.Say(model.NoticeWarning, "Cannot upscale: %v", err)
			return
		}
		plan.Width, plan.Height = w, h
		geometry, budget := r.shell.Memory()
		o, err := hires.Plan(geometry, plan, budget, factor, hires.DefaultStrength, d.Steps, r.shell.StepTime())
		if err != nil {
			r.model.Say(model.NoticeWarning, "Cannot upscale: %v", err)
			return
		}
		r.Sheet.SetPlan("Upscale " + o.Describe())
		if !o.Fits() {
			r.model.Say(model.NoticeWarning, "Upscale ×%g does not fit in memory: %s.", factor, o.Prediction.Explain())
			return
		}
		w, h, steps = o.Width, o.Height, o.Steps
		offer = fmt.Sprintf("Upscale image %d %s", c.Index+1, o.Describe()) + r.shell.FirstStageOffer(img.Rect.Dx(), img.Rect.Dy(), factor)
	}
	d.Start = &compose.Start{Name: c.SourceName(), SHA256: c.SourceHash(), Strength: hires.DefaultStrength} // its image: the first stage, as the pass starts
	d.Size, d.CustomW, d.CustomH = compose.SizeCustom, w, h
	var hs *imagefile.HiresSettings
	if factor > 1 {
		hs = &imagefile.HiresSettings{Factor: factor, Width: w, Height: h, Strength: hires.DefaultStrength, Steps: d.Steps, Upscaler: "Lanczos"}
	}
	r.shell.Ask(what, offer, what, func() {
		// The first stage: Lanczos, or the learned upscaler Settings chooses.
		r.shell.FirstStage(img, w, h, factor, func(first *image.NRGBA, upscaler string) {
			d.Start.Image = first
			if hs != nil {
				hs.Upscaler = upscaler
			}
			if r.shell.Submit(d, what, hs) {
				r.model.Say(model.NoticeInfo, "%s: image %d (seed %d), %d×%d, %d steps at strength %.2f.", what, c.Index+1, c.Seed, w, h, steps, hires.DefaultStrength)
			}
		})
	})
}
