package preview

import (
	"image"
	"math/rand/v2"
	"testing"
)

// Neutral follows the frame's main direction of variation: tokens spread along one latent
// direction come out as a grey ramp, opaque, darkest to lightest end to end.
func TestNeutralShowsTheMainVariation(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	var dir [Channels]float64
	for c := range dir {
		dir[c] = r.NormFloat64()
	}
	const w = 8
	x0 := make([]float32, w*Channels)
	for x := range w {
		for c := range Channels {
			x0[x*Channels+c] = float32(float64(x)*dir[c] + 0.01*r.NormFloat64())
		}
	}
	img := Neutral(x0, 1, w).(*image.NRGBA)
	first, last := img.NRGBAAt(0, 0), img.NRGBAAt(w-1, 0)
	if first.A != 255 || first.R != first.G || first.G != first.B {
		t.Fatalf("pixel %v is not opaque grey", first)
	}
	up := last.R > first.R
	for x := 1; x < w; x++ {
		a, b := img.NRGBAAt(x-1, 0).R, img.NRGBAAt(x, 0).R
		if (b > a) != up {
			t.Fatalf("grey levels are not a ramp at %d: %d then %d", x, a, b)
		}
	}
	if Neutral(x0[:5], 1, w) != nil {
		t.Error("a short slice made a preview")
	}
}
