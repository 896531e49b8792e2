package seed

import (
	"fmt"
	"math"
)

// ParallelThreshold is where Slerp gives up on the arc: when the mean cosine between the two
// noises' columns is above it, they are near-parallel and A1111's slerp blends them linearly.
const ParallelThreshold = 0.9995

// Slerp is AUTOMATIC1111's slerp(val, low, high) (modules/processing.py) on latents in NoiseShape
// order, (channels, h, w): it treats every (channel, column x) as a vector along the h axis — the
// dim=1 of A1111's (C, H, W) noise — normalises each, and walks the great circle from low to high
// by val, each column by its own angle:
//
//	ω = acos(loŵ·higĥ), out = sin((1−val)ω)/sin ω · low + sin(val·ω)/sin ω · high
//
// When the mean cosine over all columns is above ParallelThreshold, it is A1111's fallback,
// kept as A1111 writes it: out = val·low + (1−val)·high (the weights are the other way round
// from the arc's; with near-parallel noises the two differ little). A column whose angle is
// exactly 0 or π (sin ω = 0, where A1111 divides by zero) takes that same linear blend, so the
// result is always finite. The arithmetic is float64, rounded to float32 once per value.
//
// val 1 gives high bit for bit on the arc. Callers that want low at val 0 bit for bit skip the
// call, as A1111's ImageRNG does (VariationNoise).
func Slerp(val float64, low, high []float32, channels, h, w int) ([]float32, error) {
	if channels < 1 || h < 1 || w < 1 {
		return nil, fmt.Errorf("slerp latents: %d channels on a %d×%d grid: all must be at least 1", channels, h, w)
	}
	if len(low) != channels*h*w {
		return nil, fmt.Errorf("slerp latents: got %d values, want %d channels × %d × %d = %d", len(low), channels, h, w, channels*h*w)
	}
	if len(high) != len(low) {
		return nil, fmt.Errorf("slerp: the two noises have %d and %d values: they must have the same shape", len(low), len(high))
	}
	if math.IsNaN(val) || math.IsInf(val, 0) {
		return nil, fmt.Errorf("slerp: strength %g is not a number", val)
	}
	cols := channels * w
	dots := make([]float64, cols)
	var mean float64
	for c := 0; c < channels; c++ {
		for x := 0; x < w; x++ {
			var ll, hh, lh float64
			for y := 0; y < h; y++ {
				i := (c*h+y)*w + x
				a, b := float64(low[i]), float64(high[i])
				ll += a * a
				hh += b * b
				lh += a * b
			}
			// A1111 divides each vector by its norm before the dot product.
			d := lh / (math.Sqrt(ll) * math.Sqrt(hh))
			dots[c*w+x] = d
			mean += d
		}
	}
	mean /= float64(cols)
	out := make([]float32, len(low))
	lerp := func(i int) float32 { return float32(float64(low[i])*val + float64(high[i])*(1-val)) }
	if mean > ParallelThreshold {
		for i := range out {
			out[i] = lerp(i)
		}
		return out, nil
	}
	for c := 0; c < channels; c++ {
		for x := 0; x < w; x++ {
			omega := math.Acos(dots[c*w+x])
			so := math.Sin(omega)
			parallel := so == 0 || math.IsNaN(so)
			wl, wh := math.Sin((1-val)*omega)/so, math.Sin(val*omega)/so
			for y := 0; y < h; y++ {
				i := (c*h+y)*w + x
				if parallel {
					out[i] = lerp(i)
					continue
				}
				out[i] = float32(wl*float64(low[i]) + wh*float64(high[i]))
			}
		}
	}
	return out, nil
}

// Variation is a variation seed and how far to move towards it (A1111's subseed and
// subseed_strength).
type Variation struct {
	Seed     uint64
	Strength float64 // 0 (the base noise) … 1 (the variation seed's own noise)
}

// CheckStrength says what is wrong with a variation strength, or nil.
func CheckStrength(s float64) error {
	if !(s >= 0 && s <= 1) {
		return fmt.Errorf("variation strength %g: choose between 0 (the seed's own image) and 1 (the variation seed's image)", s)
	}
	return nil
}

// VariationNoise is the starting noise of a generation with this seed moved towards v, with
// channels latent channels on an h×w grid, in NoiseShape order: slerp(v.Strength, LatentNoise(seed), LatentNoise(v.Seed)), as A1111's
// create_random_tensors blends a subseed. Strength 0 is LatentNoise(seed) bit for bit (no blend
// is computed, as in A1111); strength 1 is LatentNoise(v.Seed) bit for bit.
func VariationNoise(seed uint64, v Variation, channels, h, w int) ([]float32, error) {
	if err := CheckStrength(v.Strength); err != nil {
		return nil, err
	}
	base, err := LatentNoise(seed, channels, h, w)
	if err != nil || v.Strength == 0 {
		return base, err
	}
	other, err := LatentNoise(v.Seed, channels, h, w)
	if err != nil {
		return nil, err
	}
	return Slerp(v.Strength, base, other, channels, h, w)
}
