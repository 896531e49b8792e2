package preview

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"
)

// Fit recovers a known affine map from samples it generated (plus a little noise), and the
// projection then draws each token's colour.
func TestFitRecoversAKnownMap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var want Projection
	for k := range 4 {
		for c := range Channels {
			want.M[k][c] = r.NormFloat64() * 0.05
		}
		want.B[k] = r.NormFloat64() * 0.1
	}
	samples := make([]Sample, 2000)
	for i := range samples {
		for c := range Channels {
			samples[i].Z[c] = float32(r.NormFloat64())
		}
		v := want.Apply(samples[i].Z[:])
		for k := range 4 {
			samples[i].RGBA[k] = v[k] + r.NormFloat64()*1e-3
		}
	}
	got, err := Fit(samples, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 4 {
		for c := range Channels {
			if d := math.Abs(got.M[k][c] - want.M[k][c]); d > 2e-4 {
				t.Fatalf("M[%d][%d] = %g, want %g", k, c, got.M[k][c], want.M[k][c])
			}
		}
		if d := math.Abs(got.B[k] - want.B[k]); d > 2e-4 {
			t.Fatalf("B[%d] = %g, want %g", k, got.B[k], want.B[k])
		}
	}
	if rms, _ := got.PatchError(samples); rms > 0.5 {
		t.Errorf("RMS error %.3f levels on noise of 0.13 levels", rms)
	}

	// Image: one pixel per token, in token order.
	x0 := make([]float32, 2*3*Channels)
	for i := range x0 {
		x0[i] = samples[i/Channels].Z[i%Channels]
	}
	img := got.Image(x0, 2, 3)
	if b := img.Bounds(); b.Dx() != 3 || b.Dy() != 2 {
		t.Fatalf("preview is %v, want 3×2", b)
	}
	for tok := range 6 {
		v := want.Apply(samples[tok].Z[:])
		px := img.(*image.NRGBA).NRGBAAt(tok%3, tok/3)
		if px.R != to8(v[0]) || px.A != to8(v[3]) {
			t.Errorf("token %d is %v, want red %d alpha %d", tok, px, to8(v[0]), to8(v[3]))
		}
	}
	if got.Image(x0[:10], 2, 3) != nil {
		t.Error("a short slice made a preview")
	}
}

// Fit refuses too few samples instead of inventing a map.
func TestFitNeedsEnoughSamples(t *testing.T) {
	if _, err := Fit(make([]Sample, 10), 0); err == nil {
		t.Error("10 samples fitted 65 unknowns")
	}
}
