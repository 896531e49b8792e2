package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftmaxRangeMatchesGo compares the build's softmax (C with cgo) with the Go one, and both
// with a float64 softmax, over rows with and without visibility limits.
func TestSoftmaxRangeMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	nq, m := 13, 1037
	scores := make([]float32, nq*m)
	for i := range scores {
		scores[i] = float32(8 * rng.NormFloat64())
	}
	vis := make([]int32, nq)
	for i := range vis {
		vis[i] = int32(1 + rng.IntN(m))
	}
	for _, visible := range [][]int32{nil, vis} {
		a, b := append([]float32(nil), scores...), append([]float32(nil), scores...)
		invA, invB := make([]float32, nq), make([]float32, nq)
		softmaxRange(a, invA, 0, nq, m, visible, 0)
		softmaxRangeGo(b, invB, 0, nq, m, visible, 0)
		for i := 0; i < nq; i++ {
			limit := m
			if visible != nil {
				limit = int(visible[i])
			}
			row := scores[i*m : (i+1)*m]
			mx := math.Inf(-1)
			for _, s := range row[:limit] {
				mx = math.Max(mx, float64(s))
			}
			sum := 0.0
			for _, s := range row[:limit] {
				sum += math.Exp(float64(s) - mx)
			}
			for j := 0; j < m; j++ {
				want := 0.0
				if j < limit {
					want = math.Exp(float64(row[j])-mx) / sum
				}
				pa := float64(a[i*m+j]) * float64(invA[i])
				pb := float64(b[i*m+j]) * float64(invB[i])
				// float32 rounds s − max to half an ulp, a relative error of |s − max|·2⁻²⁴ in e^(s−max)
				tol := (math.Abs(float64(row[j])-mx)*6e-8 + 5e-7) * want
				if math.Abs(pa-want) > tol || math.Abs(pb-want) > tol {
					t.Fatalf("row %d key %d (visible %d): build %g, Go %g, want %g", i, j, limit, pa, pb, want)
				}
			}
		}
	}
}
