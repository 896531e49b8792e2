package vae

import (
	"context"
	"math/rand/v2"
	"testing"
)

// randomLatents is a normalized latent grid with N(0, 1) entries, like the denoiser's start.
func randomLatents(c, h, w int, seed uint64) *Latents {
	r := rand.New(rand.NewPCG(seed, 1))
	l := &Latents{C: c, H: h, W: w, Data: make([]float32, c*h*w)}
	for i := range l.Data {
		l.Data[i] = float32(r.NormFloat64())
	}
	return l
}

// BenchmarkDecodeTiny decodes a 16×16 latent grid (256² pixels) with the tiny reference VAE.
func BenchmarkDecodeTiny(b *testing.B) {
	m, be := loadTiny(b)
	zn := randomLatents(m.Config().ZDim, 16, 16, 1)
	be.Timings().Reset()
	for b.Loop() {
		if _, err := m.Decode(context.Background(), zn); err != nil {
			b.Fatal(err)
		}
	}
	b.Log(be.Timings())
}

// BenchmarkDecodeTiled2048Tiny is the tiled 2048² decode (128×128 latents, DefaultTiling) with the
// tiny reference VAE; run it once under /usr/bin/time -v for the peak RSS in docs/BENCHMARKS.md.
func BenchmarkDecodeTiled2048Tiny(b *testing.B) {
	m, be := loadTiny(b)
	zn := randomLatents(m.Config().ZDim, 128, 128, 1)
	be.Timings().Reset()
	for b.Loop() {
		if _, err := m.DecodeTiled(context.Background(), zn, DefaultTiling); err != nil {
			b.Fatal(err)
		}
	}
	b.Log(be.Timings())
}
