package cpu

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"easel/engine/ml"
	"easel/engine/quant"
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

// BenchmarkLinearVsSgemm alternates a q4tp Linear [1024, 4096] → 4096 (tile-by-tile dequantize
// + sgemm) with a plain sgemm of the same shape on float32 weights, and reports the time ratio,
// which a loaded machine affects far less than either time. The sgemm is one call on every core.
//
//	go test ./engine/ml/cpu -run '^$' -bench LinearVsSgemm -benchtime 3x
func BenchmarkLinearVsSgemm(b *testing.B) {
	const n, in, out = 1024, 4096, 4096
	be := New()
	rng := rand.New(rand.NewPCG(3, 4))
	wf := randSlice(rng, out*in)
	payload, err := quant.Encode(quant.Q4TP, []int{out, in}, wf)
	if err != nil {
		b.Fatal(err)
	}
	w := &quant.Tensor{Name: "w", DType: quant.Q4TP, Shape: []int{out, in}, Data: payload}
	xs := randSlice(rng, n*in)
	x, _ := be.Upload(xs, n, in)
	dst, _ := be.New(n, out)
	c := make([]float32, n*out)
	var tLinear, tSgemm, cLinear, cSgemm time.Duration
	for b.Loop() {
		start, startCPU := time.Now(), ProcessCPUTime()
		if err := be.Linear(dst, x, w); err != nil {
			b.Fatal(err)
		}
		tLinear += time.Since(start)
		cLinear += ProcessCPUTime() - startCPU
		setBLASThreads(runtime.GOMAXPROCS(0))
		start, startCPU = time.Now(), ProcessCPUTime()
		sgemm(true, n, out, in, 1, xs, in, wf, in, 0, c, out)
		tSgemm += time.Since(start)
		cSgemm += ProcessCPUTime() - startCPU
		setBLASThreads(1)
	}
	b.ReportMetric(tLinear.Seconds()/tSgemm.Seconds(), "linear/sgemm")
	b.ReportMetric(cLinear.Seconds()/cSgemm.Seconds(), "cpu-linear/sgemm")
	b.ReportMetric(2*n*in*out*float64(b.N)/tSgemm.Seconds()/1e9, "sgemm-GFLOP/s")
}
