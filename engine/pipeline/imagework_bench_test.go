package pipeline

import (
	"image"
	"testing"
)

// BenchmarkImageWork is the cost of starting from an image against text to image on the tiny
// model, same size, steps and seed: img2img at strength 0.6 (the VAE encodes the start image,
// then 60 % of the steps run) and inpainting at 0.6 with a mask over the left half (the blend
// after every step). Besides the whole run it reports the denoising stage (where strength saves
// time), the VAE encode (what a start image adds) and the decode. docs/BENCHMARKS.md records the
// medians and their ratios.
func BenchmarkImageWork(b *testing.B) {
	p := newTinyPipeline(b, nil)
	const size, steps = 256, 10
	start := image.NewNRGBA(image.Rect(0, 0, size, size))
	for i := range start.Pix {
		start.Pix[i] = uint8(i * 31)
	}
	mask := image.NewGray(image.Rect(0, 0, size, size))
	for y := range size {
		for x := range size / 2 {
			mask.Pix[y*mask.Stride+x] = 255
		}
	}
	for _, c := range []struct {
		name string
		init *InitImage
	}{
		{"text-to-image", nil},
		{"img2img-0.6", &InitImage{Image: start, Strength: 0.6}},
		{"inpaint-0.6", &InitImage{Image: start, Strength: 0.6, Mask: mask}},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := Request{Prompt: "a lighthouse on a cliff at dusk", Width: size, Height: size, Steps: steps, CFG: 1, Seed: 9, Init: c.init}
			var denoise, encode, decode float64
			n := 0
			for b.Loop() {
				res, err := p.Run(b.Context(), req, nil)
				if err != nil {
					b.Fatal(err)
				}
				denoise += res.StageTimes[StageDenoising].Seconds()
				encode += res.StageTimes[StageEncodingImages].Seconds()
				decode += res.StageTimes[StageDecoding].Seconds()
				n++
			}
			b.ReportMetric(denoise/float64(n), "denoise-s/op")
			b.ReportMetric(encode/float64(n), "vae-encode-s/op")
			b.ReportMetric(decode/float64(n), "vae-decode-s/op")
		})
	}
}
