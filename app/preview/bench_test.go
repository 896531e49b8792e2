package preview

import (
	"context"
	"math/rand/v2"
	"testing"

	"easel/assets/calibration"
	"easel/engine/ml/cpu"
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

// BenchmarkCalibrate fits the projection from the built-in pictures through the golden tiny
// model's VAE (encode, decode, least squares): what the window does once per model.
func BenchmarkCalibrate(b *testing.B) {
	m, err := vae.Load(cpu.New(), openTinyVAE(b))
	if err != nil {
		b.Fatal(err)
	}
	pictures, err := calibration.Images()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Calibrate(context.Background(), m, pictures); err != nil {
			b.Fatal(err)
		}
	}
}
