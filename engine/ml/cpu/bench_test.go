package cpu

import (
	"math/rand/v2"
	"testing"

	"easel/engine/ml"
)

// BenchmarkAttention is one DiT step's attention per block: 1024 target rows, 32 heads × 128,
// against 256 cached prefix rows and their own keys.
//
//	go test ./engine/ml/cpu -run '^$' -bench Attention -benchtime 3x
func BenchmarkAttention(b *testing.B) {
	const n, lp, H, hd = 1024, 256, 32, 128
	be := New()
	rng := rand.New(rand.NewPCG(1, 2))
	mk := func(rows int) ml.Tensor {
		t, err := be.Upload(randSlice(rng, rows*H*hd), rows, H*hd)
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
	q, k, v, pk, pv := mk(n), mk(n), mk(n), mk(lp), mk(lp)
	dst, _ := be.New(n, H*hd)
	spec := ml.AttnSpec{Heads: H, KVHeads: H, HeadDim: hd, Scale: 0.088}
	for b.Loop() {
		if err := be.Attention(dst, q, k, v, pk, pv, spec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(4*n*(n+lp)*H*hd*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
