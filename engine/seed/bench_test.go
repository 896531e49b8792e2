package seed

import "testing"

// BenchmarkLatentNoise1024: the starting noise of a 1024×1024 image (64×64×64 values).
func BenchmarkLatentNoise1024(b *testing.B) {
	for b.Loop() {
		if _, err := LatentNoise(11, 64, 64); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPackLatents1024: packing that noise into 4096 tokens × 64.
func BenchmarkPackLatents1024(b *testing.B) {
	noise, _ := LatentNoise(11, 64, 64)
	for b.Loop() {
		if _, err := PackLatents(noise, LatentChannels, 64, 64); err != nil {
			b.Fatal(err)
		}
	}
}
