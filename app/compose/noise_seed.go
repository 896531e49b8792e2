package compose

import (
	"bytes"
	"fmt"

	"easel/app/imagefile"
	"easel/engine/condimage"
	"easel/engine/pipeline"
	"easel/engine/seed"
)

// MadeWith is what an Easel PNG records of how it was made: its seed, and its size (the PNG's).
type MadeWith struct {
	Seed          uint64
	Width, Height int
}

// madeWith reads an image file's Easel settings, or nil when it is not an Easel PNG.
func madeWith(data []byte) *MadeWith {
	m, err := imagefile.Read(bytes.NewReader(data), "")
	if err != nil || m.Settings == nil {
		return nil
	}
	return &MadeWith{Seed: m.Settings.Seed, Width: m.Width, Height: m.Height}
}

// moveNoise avoids the edit-seed trap: when a condition image is an Easel PNG made with the
// request's seed at the request's output size, drawing the same noise again replays the image
// (a haloed near-copy instead of the edit), so the noise is drawn from seed.EditNoise(seed)
// instead, with a notice. An explicit Draft.NoiseSeed always wins; a start image (img2img) is
// never a reason: re-noising one's own image is what img2img does. It returns the notices.
func (d *Draft) moveNoise(r *pipeline.Request) []string {
	if d.NoiseSeed != nil && r.Seed == d.Seed { // a noise seed goes with its seed
		n := *d.NoiseSeed
		r.NoiseSeed = &n
		return nil
	}
	w, h := d.requestSize(r)
	for _, c := range d.Conditions {
		if c.Made == nil || c.Made.Seed != r.Seed || c.Made.Width != w || c.Made.Height != h {
			continue
		}
		n := seed.EditNoise(r.Seed)
		r.NoiseSeed = &n
		return []string{fmt.Sprintf("%s was made with seed %d at this size: its noise is not drawn again (that would repeat the picture instead of editing it); this edit draws noise seed %d, recorded in the PNG.", c.Name, r.Seed, n)}
	}
	return nil
}

// requestSize is the output size of r as the pipeline will choose it, or 0×0 when that is the
// model's default size (no condition image then, so no trap).
func (d *Draft) requestSize(r *pipeline.Request) (int, int) {
	res := float64(d.resolution())
	var w, h int
	switch {
	case r.Width > 0 && r.Height > 0:
		w, h = r.Width, r.Height
	case r.Aspect > 0:
		w, h = condimage.CalculateDimensions(res*res, r.Aspect)
	case r.Init != nil && r.Init.Image != nil:
		w, h = r.Init.Image.Rect.Dx(), r.Init.Image.Rect.Dy()
	case len(r.Images) > 0:
		last := r.Images[len(r.Images)-1].Rect
		w, h = condimage.CalculateDimensions(res*res, float64(last.Dx())/float64(last.Dy()))
	}
	return w / SizeMultiple * SizeMultiple, h / SizeMultiple * SizeMultiple
}
