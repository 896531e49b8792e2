package vae

import (
	"context"
	"testing"

	"easel/engine/ml"
	"easel/internal/golden"
)

// stageTolerance is REFERENCE.md's per-stage expectation for a faithful float32 implementation.
const stageTolerance = 1e-5

// TestGoldenVAEStages compares every stage of decode and encode with each debug VAE case present
// (debug/ is optional), so a parity failure names the block where the math departs.
func TestGoldenVAEStages(t *testing.T) {
	paths, err := golden.DebugCases("vae")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Skip("no debug/debug_vae_* stages in the golden directory")
	}
	for _, p := range paths {
		dbg, err := golden.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		defer dbg.Close()
		ref, err := dbg.LoadSubject()
		if err != nil {
			t.Fatal(err)
		}
		defer ref.Close()
		t.Logf("debug stages %s of case %s", dbg.Name, ref.Name)
		t.Run(dbg.Name, func(t *testing.T) {
			m, b := loadTiny(t)
			seen := map[string]bool{}
			m.trace = func(stage string, got ml.Tensor) {
				want, shape, err := dbg.Float32s(stage)
				if err != nil {
					t.Errorf("stage %s: %v", stage, err)
					return
				}
				data, err := b.Download(got)
				if err != nil {
					t.Fatal(err)
				}
				if s := got.Shape(); len(shape) != 5 || s[0] != shape[1] || s[1] != shape[3] || s[2] != shape[4] {
					t.Errorf("stage %s: shape %v, reference %v", stage, s, shape)
					return
				}
				seen[stage] = true
				rel := golden.RelErr(data, want)
				t.Logf("%-22s rel %.2e", stage, rel)
				if !(rel <= stageTolerance) {
					t.Errorf("stage %s: relative error %.3e exceeds %.0e", stage, rel, stageTolerance)
				}
			}
			if _, err := m.Decode(context.Background(), caseLatents(t, ref, "z_normalized")); err != nil {
				t.Fatal(err)
			}
			if _, _, err := m.Encode(context.Background(), caseImage(t, ref, "image")); err != nil {
				t.Fatal(err)
			}
			for _, name := range dbg.Names() {
				if !seen[name] {
					t.Errorf("the reference stage %s was never produced", name)
				}
			}
		})
	}
}
