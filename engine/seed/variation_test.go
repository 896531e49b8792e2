package seed

import (
	"math"
	"slices"
	"testing"
)

func TestVariationNoiseEndsAreTheSeedsOwnNoise(t *testing.T) {
	const h, w = 6, 4
	base, _ := LatentNoise(7, testChannels, h, w)
	other, _ := LatentNoise(1234, testChannels, h, w)
	got0, err := VariationNoise(7, Variation{Seed: 1234, Strength: 0}, testChannels, h, w)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got0, base) {
		t.Error("strength 0 is not the seed's own noise bit for bit")
	}
	got1, err := VariationNoise(7, Variation{Seed: 1234, Strength: 1}, testChannels, h, w)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got1, other) {
		t.Error("strength 1 is not the variation seed's own noise bit for bit")
	}
	mid, err := VariationNoise(7, Variation{Seed: 1234, Strength: 0.2}, testChannels, h, w)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(mid, base) || slices.Equal(mid, other) {
		t.Error("strength 0.2 gave one of the two noises unchanged")
	}
}

func TestVariationStrengthOutsideZeroOneIsRefused(t *testing.T) {
	for _, s := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := VariationNoise(1, Variation{Seed: 2, Strength: s}, testChannels, 2, 2); err == nil {
			t.Errorf("strength %g accepted", s)
		}
	}
}

// TestSlerpWalksEachColumnsArc checks the formula on columns (channel, x) along h whose two
// vectors are orthogonal (ω = π/2): halfway is (low + high)·sin(π/4).
func TestSlerpWalksEachColumnsArc(t *testing.T) {
	const ch, h, w = 2, 2, 3
	low := make([]float32, ch*h*w)
	high := make([]float32, ch*h*w)
	for c := 0; c < ch; c++ {
		for x := 0; x < w; x++ {
			s := float32(c*w + x + 1) // each column its own length: the angle, not the length, matters
			low[(c*h+0)*w+x] = s
			high[(c*h+1)*w+x] = 2 * s
		}
	}
	out, err := Slerp(0.5, low, high, ch, h, w)
	if err != nil {
		t.Fatal(err)
	}
	k := math.Sin(math.Pi/4) / math.Sin(math.Pi/2)
	for i := range out {
		want := float32(k*float64(low[i]) + k*float64(high[i]))
		if math.Abs(float64(out[i]-want)) > 1e-6*math.Abs(float64(want))+1e-7 {
			t.Fatalf("value %d: got %g, want %g", i, out[i], want)
		}
	}
}

// TestSlerpNearParallelFallsBackAsA1111Does: near-parallel noises take A1111's linear blend,
// val·low + (1−val)·high, weights as A1111 writes them.
func TestSlerpNearParallelFallsBackAsA1111Does(t *testing.T) {
	const h, w = 8, 2
	low, _ := LatentNoise(3, testChannels, h, w)
	high := make([]float32, len(low))
	for i, v := range low {
		high[i] = v*1.5 + 1e-4*float32(i%3) // the same directions, another length
	}
	out, err := Slerp(0.25, low, high, testChannels, h, w)
	if err != nil {
		t.Fatal(err)
	}
	for i := range out {
		want := float32(float64(low[i])*0.25 + float64(high[i])*0.75)
		if out[i] != want {
			t.Fatalf("value %d: got %g, want the linear blend %g", i, out[i], want)
		}
	}
	// A column exactly parallel inside an otherwise random pair stays finite.
	a, _ := LatentNoise(5, testChannels, h, w)
	b, _ := LatentNoise(6, testChannels, h, w)
	for y := 0; y < h; y++ {
		b[y*w] = a[y*w]
	}
	out, err = Slerp(0.5, a, b, testChannels, h, w)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("value %d is %g", i, v)
		}
	}
}

func TestSlerpRefusesMismatchedNoises(t *testing.T) {
	if _, err := Slerp(0.5, make([]float32, 8), make([]float32, 4), 2, 2, 2); err == nil {
		t.Error("mismatched lengths accepted")
	}
	if _, err := Slerp(0.5, make([]float32, 8), make([]float32, 8), 2, 3, 2); err == nil {
		t.Error("a shape that does not match the length accepted")
	}
}

// testChannels is Qwen-Image-2.1's latent channel count (its VAE's z_dim), for noise drawn here.
const testChannels = 64
