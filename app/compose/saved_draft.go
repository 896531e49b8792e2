package compose

import "easel/app/settings"

// Saved is the draft's prompt and everyday settings as settings.DraftStore keeps them between
// launches (condition images, the start image and LoRAs are not: LoRAs have their own store).
func (d *Draft) Saved() settings.Draft {
	s := settings.Draft{Prompt: d.Prompt, Negative: d.Negative, Transparent: d.Transparent, Aspect: d.Aspect.Name,
		Width: d.CustomW, Height: d.CustomH, Steps: d.Steps, CFG: d.CFG, Count: d.Count, RandomSeed: d.RandomSeed, Seed: d.Seed}
	switch d.Size {
	case SizePreset:
		s.Size = "preset"
	case SizeFromImage:
		s.Size = "image"
	default:
		s.Size = "custom"
	}
	s.Scale = "1K"
	if d.Scale == Scale2K {
		s.Scale = "2K"
	}
	return s
}

// Resume takes a saved draft's prompt and settings; values the window could not have made (an
// unknown aspect, a non-positive size or step count) keep the draft's own.
func (d *Draft) Resume(s settings.Draft) {
	d.Prompt, d.Negative, d.Transparent = s.Prompt, s.Negative, s.Transparent
	switch s.Size {
	case "preset":
		if a, err := AspectByName(s.Aspect); err == nil {
			d.Size, d.Aspect = SizePreset, a
			d.Scale = Scale1K
			if s.Scale == "2K" {
				d.Scale = Scale2K
			}
		}
	case "image":
		d.Size = SizeFromImage
	case "custom":
		if s.Width > 0 && s.Height > 0 {
			d.Size, d.CustomW, d.CustomH = SizeCustom, s.Width, s.Height
		}
	}
	if s.Steps > 0 {
		d.Steps = s.Steps
	}
	if s.CFG >= 1 {
		d.CFG = s.CFG
	}
	if s.Count >= 1 {
		d.Count = s.Count
	}
	d.RandomSeed, d.Seed = s.RandomSeed, s.Seed
}
