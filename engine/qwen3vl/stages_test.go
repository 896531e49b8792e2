package qwen3vl

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"testing"

	"easel/engine/ml"
	"easel/internal/golden"
)

// stageTolerance is REFERENCE.md's figure for one stage of a faithful float32 implementation
// (~1e-5), with headroom for the stages that sum a few of them.
const stageTolerance = 1e-5

// TestGoldenStages compares every stage the reference hooked in each debug text-encoder case
// present (debug/ is optional; in the public set debug_textenc_ti2i_two: the vision tower's patch
// embedding, blocks, DeepStack mergers and merger; the token embeddings; each language-model
// layer; the final pre-norm state) with the encoder's own, on the same inputs: the prompt of the
// pipeline case its metadata names (te0_, or te1_ when it says so).
func TestGoldenStages(t *testing.T) {
	paths, err := golden.DebugCases("textenc")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Skip("no debug/debug_textenc_* stages in the golden directory")
	}
	for _, path := range paths {
		dbg := loadCase(t, path)
		t.Run(dbg.Name, func(t *testing.T) { compareTextEncStages(t, dbg) })
	}
}

// debugPrompt matches which prompt of the pipeline case a debug case hooked: "(te0_* inputs)".
var debugPrompt = regexp.MustCompile(`\b(te[01])_`)

func compareTextEncStages(t *testing.T, dbg *golden.Case) {
	pipe, err := dbg.LoadSubject()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pipe.Close() })
	prefix := "te0_"
	if m := debugPrompt.FindStringSubmatch(fmt.Sprint(dbg.Meta["case"])); m != nil {
		prefix = m[1] + "_"
	}
	t.Logf("stages of case %s, %s inputs", pipe.Name, prefix)
	enc := newTinyEncoder(t)
	vc, _ := enc.VisionConfig()

	got := map[string][]float32{}
	tap := func(stage string, x ml.Tensor) {
		v, err := enc.backend.Download(x)
		if err != nil {
			t.Errorf("download %s: %v", stage, err)
			return
		}
		// The tower runs once per image: its stages arrive image by image, in prompt order.
		got[stage] = append(got[stage], v...)
	}
	enc.lm.tap, enc.vision.tap = tap, tap
	last, err := enc.Encode(context.Background(), int32s(t, pipe, prefix+"input_ids"), visionInputs(t, pipe, prefix, vc.PatchValues()))
	if err != nil {
		t.Fatal(err)
	}
	got["last_hidden_prenorm"] = last

	names := dbg.Names()
	sort.Strings(names)
	for _, name := range names {
		v, ok := got[name]
		if !ok {
			t.Errorf("stage %s of the reference was not produced by the encoder", name)
			continue
		}
		e := golden.RelErr(v, float32s(t, dbg, name))
		if !(e <= stageTolerance) {
			t.Errorf("stage %s: relative error %.3g, want ≤ %g", name, e, stageTolerance)
		} else {
			t.Logf("stage %-32s relative error %.3g", name, e)
		}
	}
}
