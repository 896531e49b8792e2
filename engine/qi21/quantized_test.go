package qi21

import (
	"fmt"
	"testing"

	"easel/engine/quant"
	"easel/internal/golden"
)

// quantizedBounds are the measured errors of quantized block projections (everything else at the
// snapshot's bf16) against the float32 reference, rounded up: the worst case over every dit_*
// case, σ and path (see docs/BENCHMARKS.md "CPU denoiser"). For scale, the reference's own bf16
// run is 0.7–3.8 % away (REFERENCE.md).
var quantizedBounds = map[quant.DType]float64{
	quant.Q8_2F: 0.001, // measured 0.0006–0.0008
	quant.Q4TP:  0.015, // measured 0.0097–0.0134
}

// TestGoldenDiTQuantized re-encodes the block projections as a cortiq .cmf stores them and
// measures the outputs against the float32 reference, uncached and cached.
func TestGoldenDiTQuantized(t *testing.T) {
	paths, err := golden.Cases("dit")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dit_* cases: %v", err)
	}
	for _, d := range []quant.DType{quant.Q8_2F, quant.Q4TP} {
		t.Run(d.String(), func(t *testing.T) {
			m := loadModel(t, d)
			worst := 0.0
			for _, path := range paths {
				dc := loadDiTCase(t, path)
				lay := dc.layout
				in := m.Config.InChannels
				prog, err := m.Prefill(t.Context(), lay, dc.text, dc.latents[:lay.CondLatents()*in])
				if err != nil {
					t.Fatal(err)
				}
				for i, sigma := range dc.sigmas {
					full, err := m.Forward(t.Context(), lay, dc.text, dc.latents, sigma)
					if err != nil {
						t.Fatal(err)
					}
					step, err := m.Step(t.Context(), prog, dc.latents[lay.CondLatents()*in:], sigma)
					if err != nil {
						t.Fatal(err)
					}
					wantFull := dc.want(t, fmt.Sprintf("full_out_%d", i))
					eFull := golden.RelErr(full[lay.PrefixLen*m.Config.OutChannels:], wantFull[lay.PrefixLen*m.Config.OutChannels:])
					eStep := golden.RelErr(step, wantFull[lay.PrefixLen*m.Config.OutChannels:])
					t.Logf("%s σ=%v: target rows relative error uncached %.4f, cached %.4f", dc.name, sigma, eFull, eStep)
					worst = max(worst, eFull, eStep)
				}
				m.Release(prog)
			}
			t.Logf("%v: worst relative error %.4f (bound %g)", d, worst, quantizedBounds[d])
			if worst > quantizedBounds[d] {
				t.Errorf("%v: worst relative error %.4f exceeds the recorded %g", d, worst, quantizedBounds[d])
			}
		})
	}
}
