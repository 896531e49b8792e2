package seed

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

// BenchmarkLatentNoise1024: the starting noise of a 1024×1024 image (64×64×64 values).
func BenchmarkLatentNoise1024(b *testing.B) {
	start := processCPU()
	for b.Loop() {
		if _, err := LatentNoise(11, 64, 64, 64); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
