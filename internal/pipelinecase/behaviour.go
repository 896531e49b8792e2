package pipelinecase

import (
	"image"
	"image/color"
	"testing"

	"easel/internal/golden"
)

// Behaviour is a request for a test of behaviour (a decline, a cancellation, a fault, the event
// stream), which needs a run of some shape, not a reference's numbers: the test builds it, so no
// case folder makes it skip. The fields are a pipeline.Request's.
type Behaviour struct {
	Prompt, Negative string
	Width, Height    int
	Resolution       int // the condition images' size (about Resolution² pixels)
	Steps            int
	CFG              float64
	Seed             uint64
	Images           []*image.NRGBA
}

// BehaviourRequest is a CFG request (two programs) with images made-up condition images: the
// prompt, the negative prompt and the condition-image resolution of the folder's first pipeline
// case when it has one (made-up ones when it has none or they are empty), at 64×64 (a 4×4 latent
// grid), three steps, seed 7. The tests that take it compare runs with each other, never with a
// case's data.
func BehaviourRequest(t testing.TB, images int) Behaviour {
	t.Helper()
	b := Behaviour{Prompt: "a red kite over a green hill", Negative: "blurry, washed out",
		Width: 64, Height: 64, Resolution: 96, Steps: 3, CFG: 3, Seed: 7}
	paths, err := golden.Cases("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) > 0 {
		c, err := golden.Load(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		spec, err := c.Pipeline()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if spec.Prompt != "" {
			b.Prompt = spec.Prompt
		}
		if spec.Negative != "" {
			b.Negative = spec.Negative
		}
		if spec.Resolution > 0 {
			b.Resolution = spec.Resolution
		}
	}
	for i := range images {
		b.Images = append(b.Images, madeUpImage(48+16*(i%2), 64-16*(i%2), i))
	}
	return b
}

// madeUpImage is a w×h picture with some structure (a gradient and a disc placed by k), so its
// latents and vision patches are not flat.
func madeUpImage(w, h, k int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	cx, cy := w/3+7*k, h/2
	for y := range h {
		for x := range w {
			c := color.NRGBA{uint8(255 * x / w), uint8(255 * y / h), uint8(60 * k), 255}
			if (x-cx)*(x-cx)+(y-cy)*(y-cy) < w*h/12 {
				c = color.NRGBA{240, 200 - uint8(40*k), 30, 255}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}
