package qi21

import (
	"testing"

	"easel/engine/ml"
	"easel/internal/golden"
)

// TestRopeTableMatchesReference compares the layout's RoPE positions, turned into the cos/sin
// table, with the reference's complex table pos_embed (one row per joint token) of every debug
// dit case present (debug/ is optional; in the public set: dit_ti2i_two at σ 0.61).
func TestRopeTableMatchesReference(t *testing.T) {
	paths, err := golden.DebugCases("dit")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Skip("no debug/debug_dit_* stages in the golden directory: nothing to compare the RoPE table with")
	}
	m := loadModel(t, 0)
	for _, p := range paths {
		dbg, err := golden.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dbg.Close() })
		ref, err := dbg.LoadSubject()
		if err != nil {
			t.Fatal(err)
		}
		path := ref.Path
		ref.Close()
		t.Run(dbg.Name, func(t *testing.T) {
			dc := loadDiTCase(t, path)
			t.Logf("debug stages %s of case %s", dbg.Name, dc.name)
			cos, sin, err := ml.RopeTable(dc.layout.Positions, m.Config.AxesDims, ropeTheta)
			if err != nil {
				t.Fatal(err)
			}
			for name, got := range map[string][]float32{"pos_embed.real": cos, "pos_embed.imag": sin} {
				want, _, err := dbg.Float32s(name)
				if err != nil {
					t.Fatal(err)
				}
				if e := golden.MaxAbsErr(got, want); e > 1e-6 {
					t.Errorf("%s: max abs error %.3g", name, e)
				}
			}
		})
	}
}

// TestLayoutFollowsSpecExample checks §6.8's rules on a hand-made layout: two text rows, a 2×4
// condition image (2 slots), one text row, a 4×2 target (2 slots).
func TestLayoutFollowsSpecExample(t *testing.T) {
	mask := []bool{false, false, true, true, false, true, true}
	lay, err := NewLayout(mask, [][2]int{{2, 4}, {4, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if lay.S != 19 || lay.T != 8 || lay.PrefixLen != 11 || lay.TextLen != 5 || lay.TextRows() != 3 {
		t.Fatalf("S %d T %d prefix %d L %d text %d; want 19 8 11 5 3", lay.S, lay.T, lay.PrefixLen, lay.TextLen, lay.TextRows())
	}
	wantIDs := []int{-1, -1, 0, 0, 0, 0, 0, 0, 0, 0, -1, 1, 1, 1, 1, 1, 1, 1, 1}
	for r, id := range wantIDs {
		if lay.ImageIDs[r] != id {
			t.Fatalf("image ids %v, want %v", lay.ImageIDs, wantIDs)
		}
	}
	// text frames 0, 1; the image at frame 2 with h ∈ {−1, 0}, w ∈ {−2..1}; frame += max(2,4) → 6
	// for the text row; the target at frame 7 with h ∈ {−2..1}, w ∈ {−1, 0}.
	want := map[int][]int{0: {0, 0, 0}, 1: {1, 1, 1}, 2: {2, -1, -2}, 9: {2, 0, 1}, 10: {6, 6, 6}, 11: {7, -2, -1}, 18: {7, 1, 0}}
	for r, p := range want {
		got := lay.Positions[r]
		if got[0] != p[0] || got[1] != p[1] || got[2] != p[2] {
			t.Errorf("row %d position %v, want %v", r, got, p)
		}
	}
}

func TestLayoutRejectsInconsistentInputs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mask   []bool
		shapes [][2]int
	}{
		{"slots do not match shapes", []bool{false, true, true, true}, [][2]int{{2, 2}, {2, 2}}},
		{"text among target slots", []bool{false, true, false}, [][2]int{{2, 4}}},
		{"odd target", []bool{false, true}, [][2]int{{1, 3}}},
		{"no shapes", []bool{false}, nil},
	} {
		if _, err := NewLayout(tc.mask, tc.shapes); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// TestArgumentMismatchesAreErrors: wrong lengths, a released or foreign program.
func TestArgumentMismatchesAreErrors(t *testing.T) {
	m := loadModel(t, 0)
	c := m.Config
	lay, err := NewLayout([]bool{false, false, true}, [][2]int{{2, 2}})
	if err != nil {
		t.Fatal(err)
	}
	text := make([]float32, lay.TextLen*c.ContextDim)
	if _, err := m.Forward(t.Context(), lay, text[1:], make([]float32, lay.Latents*c.InChannels), 0.5); err == nil {
		t.Error("Forward accepted a short prompt")
	}
	if _, err := m.Prefill(t.Context(), lay, text, make([]float32, 5)); err == nil {
		t.Error("Prefill accepted condition latents for a layout without conditions")
	}
	prog, err := m.Prefill(t.Context(), lay, text, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Step(t.Context(), prog, make([]float32, 3*c.InChannels), 0.5); err == nil {
		t.Error("Step accepted 3 target rows for a 4-row target")
	}
	other := loadModel(t, 0)
	if _, err := other.Step(t.Context(), prog, make([]float32, 4*c.InChannels), 0.5); err == nil {
		t.Error("another model accepted the program")
	}
	m.Release(prog)
	if _, err := m.Step(t.Context(), prog, make([]float32, 4*c.InChannels), 0.5); err == nil {
		t.Error("Step ran a released program")
	}
}
