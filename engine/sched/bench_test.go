package sched

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the process's CPU time (user + system, all threads), which a busy shared machine
// inflates far less than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSchedule40Steps1024: the 40-step schedule of a 1024×1024 image.
func BenchmarkSchedule40Steps1024(b *testing.B) {
	cfg := DefaultConfig()
	start := processCPU()
	for b.Loop() {
		if _, err := cfg.Schedule(40, 4096); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkEulerStep1024: one Euler update of 1024×1024 packed latents (4096 tokens × 64).
func BenchmarkEulerStep1024(b *testing.B) {
	x := make([]float32, 4096*64)
	v := make([]float32, len(x))
	for i := range v {
		v[i] = float32(i%7) - 3
	}
	b.SetBytes(int64(8 * len(x)))
	start := processCPU()
	for b.Loop() {
		if err := EulerStep(x, v, 0.5, 0.49); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}
