package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"easel/engine/quant"
)

// One row through q8_2f and q8_row weights (the one-row path) gives x · wᵀ of the dequantized
// weights within float32 rounding: every output within 1e-5 of Σ|w·x| of its row, in float64.
func TestLinearOneRowThroughQ8Weights(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		d          quant.DType
		rows, cols int
	}{{quant.Q8_2F, 300, 1000}, {quant.Q8Row, 257, 96}, {quant.Q8_2F, 3, 70000}} {
		w := make([]float32, c.rows*c.cols)
		for i := range w {
			w[i] = float32(rng.NormFloat64()) * 0.02
		}
		for i := 0; i < c.cols; i += 97 {
			w[i] *= 30 // an outlier column for the column field
		}
		payload, err := quant.Encode(c.d, []int{c.rows, c.cols}, w)
		if err != nil {
			t.Fatal(err)
		}
		qt := &quant.Tensor{Name: "w", DType: c.d, Shape: []int{c.rows, c.cols}, Data: payload}
		deq, err := quant.Dequantize(qt)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, c.cols)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		b := New()
		xt, _ := b.Upload(x, 1, c.cols)
		yt, _ := b.New(1, c.rows)
		if err := b.Linear(yt, xt, qt); err != nil {
			t.Fatal(err)
		}
		y, _ := b.Download(yt)
		worst := 0.0
		for o := range c.rows {
			var want, scale float64
			for i := range c.cols {
				p := float64(deq[o*c.cols+i]) * float64(x[i])
				want += p
				scale += math.Abs(p)
			}
			worst = max(worst, math.Abs(float64(y[o])-want)/scale)
		}
		if !(worst <= 1e-5) {
			t.Errorf("%v [%d, %d]: error %.3g of Σ|w·x|, want ≤ 1e-5", c.d, c.rows, c.cols, worst)
		}
	}
}

// The C dot product and the Go one agree.
func TestDotQ8MatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cols, rows := 1031, 5
	codes := make([]byte, rows*cols)
	for i := range codes {
		codes[i] = byte(rng.IntN(256))
	}
	x := make([]float32, cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	got, want := make([]float32, rows), make([]float32, rows)
	dotQ8(codes, x, got)
	dotQ8Go(codes, x, want)
	for r := range got {
		if d := math.Abs(float64(got[r] - want[r])); d > 1e-4*math.Abs(float64(want[r]))+1e-3 {
			t.Errorf("row %d: %g, Go %g", r, got[r], want[r])
		}
	}
}
