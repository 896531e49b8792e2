package pipelinemetal

import (
	"image"
	"image/color"
	"slices"
	"testing"

	"easel/engine/pipeline"
)

// TestEmuInitStrengthOneIsTextToImageOnMetal: with the DiT on the emulated device, strength 1
// starts from the seed's noise (σ₀ = 1), so the picture is the text-to-image one bit for bit,
// under CFG too (engine/pipeline's TestInitStrengthOneIsTextToImage on the CPU).
func TestEmuInitStrengthOneIsTextToImageOnMetal(t *testing.T) {
	p := q8Pipeline(t, onMetal(emuDevice(t, 0, 0)))
	for _, cfg := range []float64{1, 3} {
		req := pipeline.Request{Prompt: "a lighthouse on a cliff", NegativePrompt: "fog", Width: 64, Height: 64, Steps: 8, CFG: cfg, Seed: 42}
		t2i, err := p.Run(t.Context(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Init = &pipeline.InitImage{Image: initTestImage(), Strength: 1}
		i2i, err := p.Run(t.Context(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(t2i.Latents, i2i.Latents) || !slices.Equal(t2i.Image.Pix, i2i.Image.Pix) {
			t.Errorf("CFG %g: strength 1 differs from text-to-image of the same seed", cfg)
		}
		if i2i.StepsRun != req.Steps || i2i.Steps != req.Steps {
			t.Errorf("CFG %g: strength 1 ran %d of %d steps, want all %d", cfg, i2i.StepsRun, i2i.Steps, req.Steps)
		}
	}
}

// initTestImage is a 64×64 picture with some structure (a gradient and a disc), so its latents
// are not flat.
func initTestImage() *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			c := color.NRGBA{uint8(4 * x), uint8(4 * y), 128, 255}
			if (x-40)*(x-40)+(y-24)*(y-24) < 200 {
				c = color.NRGBA{240, 200, 30, 255}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}
