package cpu

import (
	"math/rand/v2"
	"sort"
	"time"
)

// MeasureSgemm times C[m×n] = A[m×k]·B[k×n] with this build's GEMM reps times (after one warm-up)
// and returns the median duration and the rate in GFLOP/s at that median. It is the yardstick
// easel bench compares whole blocks against.
func MeasureSgemm(m, n, k, reps int) (time.Duration, float64) {
	rng := rand.New(rand.NewPCG(1, 1))
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for i := range b {
		b[i] = float32(rng.NormFloat64())
	}
	sgemm(false, m, n, k, 1, a, k, b, n, 0, c, n)
	times := make([]time.Duration, max(1, reps))
	for i := range times {
		start := time.Now()
		sgemm(false, m, n, k, 1, a, k, b, n, 0, c, n)
		times[i] = time.Since(start)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	med := times[len(times)/2]
	return med, 2 * float64(m) * float64(n) * float64(k) / med.Seconds() / 1e9
}
