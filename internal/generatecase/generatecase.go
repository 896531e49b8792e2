// Package generatecase runs the text-generation reference cases (generate_*.safetensors, see
// testdata/golden/REFERENCE.md "Text generation with the text encoder") against a decoder, for the
// CPU test (engine/qwen3vl) and its emulated twin (engine/qwen3vl/qwen3vlmetal): it builds and
// converts the untied tiny text encoder a case names, reads the case's inputs and checks the
// greedy tokens, the tokens under repetition penalty 1.3 and every step's top logits.
//
// It imports no network, so a network's own tests can use it.
package generatecase

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/internal/golden"
	"easel/internal/tinysnapshot"
)

// Tolerance bounds each top logit's error relative to the step's largest |logit| (REFERENCE.md's
// float32 parity bound).
const Tolerance = 1e-4

// RepetitionPenalty is the penalty of the generated_ids_rp run.
const RepetitionPenalty = 1.3

// Inputs are a case's prompt: its token ids and, for an image case, the processor's pixel rows
// and each image's (t, h, w) patch grid.
type Inputs struct {
	IDs    []int32
	Pixels []float32
	Grids  [][3]int
}

// Run is one greedy decoding of the decoder under test: maxTokens tokens with the given
// repetition penalty (1: none), no stop token, onLogits called with each step's raw logits.
type Run func(t *testing.T, in Inputs, maxTokens int, penalty float64, onLogits func(step int, logits []float32)) []int32

// Each runs every generate_* case of the golden folder as a subtest named by the file's stem;
// model converts the case's untied text encoder with the given profile and opens it.
func Each(t *testing.T, profile convert.Profile, run func(t *testing.T, c *golden.Case, model *cmf.File) Run) {
	paths, err := golden.Cases("generate")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no generate_* cases in the golden directory")
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".safetensors"), func(t *testing.T) {
			c, err := golden.Load(p)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			perm, ok := tinysnapshot.CasePermutation(c)
			if !ok {
				t.Fatalf("%s has no lm_head_permutation {a, b} in its metadata", c.Name)
			}
			f, err := cmf.Open(Model(t, perm, profile))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			Check(t, c, run(t, c, f))
		})
	}
}

// Model converts the untied tiny snapshot for perm with the profile into the test's temporary
// folder and returns the .cmf's path.
func Model(t *testing.T, perm tinysnapshot.Permutation, profile convert.Profile) string {
	t.Helper()
	snap := tinysnapshot.Untied(t, perm)
	out := filepath.Join(t.TempDir(), fmt.Sprintf("untied-%d-%d-%s.cmf", perm.A, perm.B, profile))
	if _, err := convert.Convert(context.Background(), snap, out, convert.Options{Profile: profile}); err != nil {
		t.Fatal(err)
	}
	return out
}

// ReadInputs reads a case's input_ids and, when present, pixel_values and image_grid_thw.
func ReadInputs(t *testing.T, c *golden.Case) Inputs {
	t.Helper()
	var in Inputs
	ids, _, err := c.Int64s("input_ids")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range ids {
		in.IDs = append(in.IDs, int32(v))
	}
	if !c.Has("image_grid_thw") {
		return in
	}
	grid, _, err := c.Int64s("image_grid_thw")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+3 <= len(grid); i += 3 {
		in.Grids = append(in.Grids, [3]int{int(grid[i]), int(grid[i+1]), int(grid[i+2])})
	}
	if in.Pixels, _, err = c.Float32s("pixel_values"); err != nil {
		t.Fatal(err)
	}
	return in
}

// Check runs the decoder twice (greedy, then with the repetition penalty) and compares the
// tokens exactly and, on the greedy run, each step's logits at the case's top-256 indices.
func Check(t *testing.T, c *golden.Case, run Run) {
	t.Helper()
	in := ReadInputs(t, c)
	want, wantShape, err := c.Int64s("generated_ids")
	if err != nil {
		t.Fatal(err)
	}
	wantRP, _, err := c.Int64s("generated_ids_rp")
	if err != nil {
		t.Fatal(err)
	}
	topIdx, idxShape, err := c.Int64s("topk_indices")
	if err != nil {
		t.Fatal(err)
	}
	topVal, _, err := c.Float32s("topk_values")
	if err != nil {
		t.Fatal(err)
	}
	steps := wantShape[len(wantShape)-1]
	k := idxShape[1]
	if idxShape[0] != steps {
		t.Fatalf("%s: topk_indices has %d steps, generated_ids %d", c.Name, idxShape[0], steps)
	}

	worst, worstStep := 0.0, -1
	got := run(t, in, steps, 1, func(step int, logits []float32) {
		if step >= steps {
			return
		}
		scale := 0.0
		for _, v := range logits {
			scale = max(scale, math.Abs(float64(v)))
		}
		for j := range k {
			idx := topIdx[step*k+j]
			e := math.Abs(float64(logits[idx])-float64(topVal[step*k+j])) / scale
			if !(e <= worst) {
				worst, worstStep = e, step
			}
		}
	})
	if !equalIDs(got, want) {
		t.Errorf("greedy tokens:\n got %v\nwant %v", got, want)
	}
	if !(worst <= Tolerance) {
		t.Errorf("top-%d logits: error %.3g of the step's largest |logit| at step %d, want ≤ %g", k, worst, worstStep, Tolerance)
	} else {
		t.Logf("top-%d logits over %d steps: largest error %.3g of the step's largest |logit| (step %d)", k, steps, worst, worstStep)
	}
	gotRP := run(t, in, steps, RepetitionPenalty, nil)
	if !equalIDs(gotRP, wantRP) {
		t.Errorf("tokens with repetition penalty %g:\n got %v\nwant %v", RepetitionPenalty, gotRP, wantRP)
	}
}

func equalIDs(got []int32, want []int64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if int64(got[i]) != want[i] {
			return false
		}
	}
	return true
}
