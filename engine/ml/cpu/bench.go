package cpu

import (
	"math/rand/v2"
	"runtime"
	"sort"
	"time"
)

// SgemmTiming is a measured sgemm: median wall time and the rate at it, and the median process
// CPU time (all threads) per call.
type SgemmTiming struct {
	Wall   time.Duration
	CPU    time.Duration
	GFLOPs float64
}

// MeasureSgemm times C[m×n] = A[m×k]·B[k×n] with this build's GEMM reps times (after one warm-up).
// It is the yardstick easel bench compares whole blocks against, so one call uses every core even
// where the backend itself runs BLAS single-threaded on several goroutines.
func MeasureSgemm(m, n, k, reps int) SgemmTiming {
	rng := rand.New(rand.NewPCG(1, 1))
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for i := range b {
		b[i] = float32(rng.NormFloat64())
	}
	setBLASThreads(runtime.GOMAXPROCS(0))
	defer setBLASThreads(1)
	sgemm(false, m, n, k, 1, a, k, b, n, 0, c, n)
	wall := make([]time.Duration, max(1, reps))
	cpu := make([]time.Duration, len(wall))
	for i := range wall {
		start, startCPU := time.Now(), ProcessCPUTime()
		sgemm(false, m, n, k, 1, a, k, b, n, 0, c, n)
		wall[i], cpu[i] = time.Since(start), ProcessCPUTime()-startCPU
	}
	med := Median(wall)
	return SgemmTiming{Wall: med, CPU: Median(cpu), GFLOPs: 2 * float64(m) * float64(n) * float64(k) / med.Seconds() / 1e9}
}

// Median is the middle of a list of durations (the upper middle for an even count).
func Median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
