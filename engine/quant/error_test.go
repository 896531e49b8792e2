package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// studentT is a seeded rows×cols matrix of Student-t (ν = 3) values times scale: heavy tails, the
// shape of real transformer weights with outliers.
func studentT(seed uint64, rows, cols int, scale float64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 3))
	w := make([]float32, rows*cols)
	for i := range w {
		a, b, c := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		chi2 := a*a + b*b + c*c
		w[i] = float32(rng.NormFloat64() / math.Sqrt(chi2/3) * scale)
	}
	return w
}

// TestCodecErrorBudget measures ‖w − ŵ‖/‖w‖ of every codec on a [4096, 4096] weight drawn from a
// Gaussian and from a Student-t with ν = 3 (σ-scale 0.02, the size of real weights) and holds each
// under the budget recorded in docs/BENCHMARKS.md ("Model files"). Print the figures with -v.
//
//	go test ./engine/quant -run CodecErrorBudget -v
func TestCodecErrorBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes 16 M weights per codec and distribution")
	}
	const rows, cols = 4096, 4096
	budgets := []struct {
		dtype            DType
		gauss, heavyTail float64
	}{
		{Q4TP, 0.100, 0.145},
		{Q8_2F, 0.0095, 0.042},
		{Q8Row, 0.0095, 0.047},
		{BF16, 0.0018, 0.0018},
		{F16, 0.00023, 0.00023},
	}
	weights := []struct {
		name string
		w    []float32
	}{
		{"gaussian", gaussian(2026, rows, cols, 0.02)},
		{"student-t(3)", studentT(2026, rows, cols, 0.02)},
	}
	for _, b := range budgets {
		for i, wt := range weights {
			payload, err := Encode(b.dtype, []int{rows, cols}, wt.w)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Dequantize(&Tensor{DType: b.dtype, Shape: []int{rows, cols}, Data: payload})
			if err != nil {
				t.Fatal(err)
			}
			e := relRMS(wt.w, got)
			budget := b.gauss
			if i == 1 {
				budget = b.heavyTail
			}
			t.Logf("%-6v %-13s relative RMS error %.5f (budget %.5f), %.3f bits/weight",
				b.dtype, wt.name, e, budget, 8*float64(len(payload))/float64(rows*cols))
			if e > budget {
				t.Errorf("%v on %s weights: relative RMS error %.5f exceeds its budget %.5f", b.dtype, wt.name, e, budget)
			}
		}
	}
}
