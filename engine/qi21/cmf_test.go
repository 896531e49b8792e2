package qi21

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/quant"
	"easel/internal/golden"
)

// TestGoldenDiTThroughConvertedCMF converts the tiny snapshot with each profile and runs every
// dit_* case from the memory-mapped .cmf: the f16 profile (the checkpoint's own bf16) within the
// float32 budget, q8 and cortiq (q8_2f and q4tp block projections) within the bounds measured
// with the same codecs in TestGoldenDiTQuantized.
func TestGoldenDiTThroughConvertedCMF(t *testing.T) {
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	paths, err := golden.Cases("dit")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dit_* cases: %v", err)
	}
	for _, tc := range []struct {
		profile convert.Profile
		codec   quant.DType
		bound   float64
	}{
		{convert.ProfileF16, quant.BF16, parityBound},
		{convert.ProfileQ8, quant.Q8_2F, quantizedBounds[quant.Q8_2F]},
		{convert.ProfileCortiq, quant.Q4TP, quantizedBounds[quant.Q4TP]},
	} {
		t.Run(string(tc.profile), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "tiny.cmf")
			if _, err := convert.Convert(context.Background(), snap, out, convert.Options{Profile: tc.profile, NoVision: true}); err != nil {
				t.Fatal(err)
			}
			f, err := cmf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := Load(f, cpu.New())
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Blocks[0].ToQ.DType; got != tc.codec {
				t.Fatalf("block projections are %v in the %s profile, want %v", got, tc.profile, tc.codec)
			}
			in, out2 := m.Config.InChannels, m.Config.OutChannels
			for _, path := range paths {
				dc := loadDiTCase(t, path)
				lay := dc.layout
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
					want := dc.want(t, fmt.Sprintf("full_out_%d", i))[lay.PrefixLen*out2:]
					for what, got := range map[string][]float32{"Forward": full[lay.PrefixLen*out2:], "Prefill+Step": step} {
						if e := golden.RelErr(got, want); e > tc.bound {
							t.Errorf("%s σ=%v %s: relative error %.4g > %g", dc.name, sigma, what, e, tc.bound)
						}
					}
				}
				m.Release(prog)
			}
		})
	}
}
