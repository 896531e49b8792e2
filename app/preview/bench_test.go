package preview

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkPreview1024 renders one step preview of a 1024² image (64×64 latents).
func BenchmarkPreview1024(b *testing.B) {
	p, err := Load(TinyFile)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	x0 := make([]float32, 64*64*Channels)
	for i := range x0 {
		x0[i] = float32(r.NormFloat64())
	}
	b.ResetTimer()
	for b.Loop() {
		if p.Image(x0, 64, 64) == nil {
			b.Fatal("no image")
		}
	}
}
