package preview

import (
	"context"
	"flag"
	"math/rand/v2"
	"testing"

	"easel/assets/calibration"
	"easel/engine/cmf"
	"easel/engine/ml/cpu"
	"easel/engine/quant"
	"easel/engine/vae"
)

// BenchmarkPreview1024 renders one step preview of a 1024² image (64×64 latents).
func BenchmarkPreview1024(b *testing.B) {
	p, err := Load(TinyFile)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	x0 := make([]float32, 64*64*Channels)
	for i := range x0 {
		x0[i] = float32(r.NormFloat64())
	}
	b.ResetTimer()
	for b.Loop() {
		if p.Image(x0, 64, 64) == nil {
			b.Fatal("no image")
		}
	}
}

var calibPictures = flag.Int("calibrate.pictures", 0, "BenchmarkCalibrate: use only the first N built-in pictures (0: all)")

// BenchmarkCalibrate fits the projection from the built-in pictures through the golden tiny
// model's VAE, or with -preview.model=FILE.cmf through that model's (encode, decode, least
// squares): what the window does once per model. -calibrate.pictures=N times the first N
// pictures only (each is encoded and decoded on its own, so the time scales with N); it reports
// the seconds per picture.
func BenchmarkCalibrate(b *testing.B) {
	var src quant.Source
	if *model != "" {
		f, err := cmf.Open(*model)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		src = f
	} else {
		src = openTinyVAE(b)
	}
	m, err := vae.Load(cpu.New(), src)
	if err != nil {
		b.Fatal(err)
	}
	pictures, err := calibration.Images()
	if err != nil {
		b.Fatal(err)
	}
	if n := *calibPictures; n > 0 && n < len(pictures) {
		pictures = pictures[:n]
	}
	ctx := context.Background()
	if len(pictures)*64 < Channels+1 {
		// Too few tokens to fit: time the encodes and decodes alone.
		for b.Loop() {
			if _, err := CalibrationSamples(ctx, m, pictures); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		for b.Loop() {
			if _, err := Calibrate(ctx, m, pictures); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/float64(len(pictures)), "s/picture")
}
