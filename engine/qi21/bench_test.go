package qi21

import (
	"testing"

	"easel/engine/ml/cpu"
	"easel/engine/quant"
)

// BenchmarkBlock runs one block of the published geometry (q4tp weights) over 256 target rows
// against 64 prefix rows on the CPU backend; `easel bench dit-cpu` is the full-size measurement.
//
//	go test ./engine/qi21 -run '^$' -bench Block -benchtime 3x
func BenchmarkBlock(b *testing.B) {
	m, err := NewRandomBlockModel(PublishedConfig(), quant.Q4TP, cpu.New())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := m.BenchBlock(256, 64, 1, cpu.ProcessCPUTime)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.GFLOPs, "GFLOP/s")
	}
}

// TestBenchBlockRunsAndCounts checks the benchmark's plumbing on a small geometry: the block
// runs, and the FLOP count is the formula's.
func TestBenchBlockRunsAndCounts(t *testing.T) {
	c := PublishedConfig()
	c.Heads, c.HeadDim, c.AxesDims = 2, 64, []int{16, 24, 24}
	m, err := NewRandomBlockModel(c, quant.Q8_2F, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.BenchBlock(16, 8, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	D, F := 128.0, 384.0
	if want := 2 * 16 * (4*D*D + 3*D*F); r.GemmFlops != want {
		t.Errorf("GEMM FLOPs %g, want %g", r.GemmFlops, want)
	}
	if _, ok := r.ClassMS["gemm"]; len(r.Reps) != 2 || !ok {
		t.Errorf("the result lacks repetitions or the gemm class: %+v", r)
	}
}
