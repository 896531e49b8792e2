package latents

import (
	"syscall"
	"testing"
	"time"

	"easel/engine/seed"
)

// processCPU is the CPU time this process has used (user + system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPackLatents1024: packing the starting noise of a 1024×1024 image into 4096 tokens × 64.
func BenchmarkPackLatents1024(b *testing.B) {
	noise, _ := seed.LatentNoise(11, 64, 64, 64)
	start := processCPU()
	for b.Loop() {
		if _, err := Pack(noise, 64, 64, 64); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}
