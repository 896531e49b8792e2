package pipeline

import (
	"context"
	"testing"

	"easel/engine/cmf"
	"easel/engine/ml"
	"easel/engine/ml/cpu"
	"easel/engine/vae"
	"easel/internal/golden"
)

// budgetBackend is the CPU backend reporting a chosen device budget, as a GPU backend reports its
// working-set limit.
type budgetBackend struct {
	ml.Backend
	budget int64
}

func (b budgetBackend) DeviceBudget() int64 { return b.budget }

// The pipeline decodes in one piece when the planned activations fit a quarter of the device
// budget — bit for bit the untiled decoder — and in tiles when they do not.
func TestDecodeChoosesTilingFromTheBudget(t *testing.T) {
	path := tinyModel(t)
	f, err := cmf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	be := cpu.New()
	ref, err := vae.Load(be, f)
	if err != nil {
		t.Fatal(err)
	}
	const h, w = 12, 12
	whole, err := ref.PlanDecode(h, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	latents := make([]float32, h*w*64)
	for i := range latents {
		latents[i] = float32((i*7919)%201-100) / 60 // deterministic, spread over ±1.7
	}
	zn, err := vae.FromTokens(latents, h, w)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := ref.Decode(context.Background(), zn)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		budget    int64
		wantExact bool
	}{
		// Twice the headroom: the wrapper hides the CPU backend's fused channel norm, so the
		// pipeline plans the (larger) composed fallback.
		{"fits", 8 * whole.PeakActivationBytes, true},
		{"tight", 4 * (whole.PeakActivationBytes - 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(f, budgetBackend{be, tc.budget}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Decode(context.Background(), latents, h, w)
			if err != nil {
				t.Fatal(err)
			}
			e := golden.MaxAbsErr(got.Pix, exact.Pix)
			if tc.wantExact && e != 0 {
				t.Errorf("one-piece decode differs from vae.Decode by %g", e)
			}
			if !tc.wantExact && e == 0 {
				t.Error("a budget below the one-piece plan still decoded in one piece")
			}
		})
	}
}
