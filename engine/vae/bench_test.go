package vae

import (
	"context"
	"math/rand/v2"
	"testing"

	"easel/engine/ml"
	"easel/engine/ml/cpu"
	"easel/engine/quant"
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

// BenchmarkRealWidthConv is one 3×3 convolution of the published decoder's widest stage (1152 →
// 1152 channels, f16 weights) over a 32×32 map: 24.5 GFLOP, the unit the decoder's cost is made of
// (a 1024² decode is 17.2 TFLOP of convolutions untiled, 27.6 tiled; TestDecodeMemoryIsBoundedByTheTile).
func BenchmarkRealWidthConv(b *testing.B) {
	const C, S = 1152, 32
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]float32, C*C*9)
	for i := range w {
		w[i] = float32(r.NormFloat64() * 0.01)
	}
	c, err := fixedConv("bench.conv", w, C, C, 3)
	if err != nil {
		b.Fatal(err)
	}
	c.W.Data, err = quant.Encode(quant.F16, c.W.Shape, w)
	if err != nil {
		b.Fatal(err)
	}
	c.W.DType = quant.F16
	be := cpu.New()
	x, _ := be.Upload(make([]float32, C*S*S), C, S, S)
	e := ml.NewScope(be)
	for b.Loop() {
		e.Free(c.same(e, x))
		if err := e.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*float64(C*C*9*S*S)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkPlanDecodeTiled2048 is the dry run app/memplan's Metal plan and the pipeline's tiling
// choice make for a 2048² decode of the published geometry in 64² tiles.
func BenchmarkPlanDecodeTiled2048(b *testing.B) {
	cfg := PublishedConfig()
	for b.Loop() {
		if _, err := PlanDecodeTiledFor(cfg, 128, 128, Tiling{Tile: 64, Overlap: 16}); err != nil {
			b.Fatal(err)
		}
	}
}
