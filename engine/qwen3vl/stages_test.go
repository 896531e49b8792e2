package qwen3vl

import (
	"context"
	"sort"
	"testing"

	"easel/engine/ml"
	"easel/internal/golden"
)

// stageTolerance is REFERENCE.md's figure for one stage of a faithful float32 implementation
// (~1e-5), with headroom for the stages that sum a few of them.
const stageTolerance = 1e-5

// TestGoldenStages compares every stage the reference hooked (debug_textenc_ti2i_two: the vision
// tower's patch embedding, blocks, DeepStack mergers and merger; the token embeddings; each
// language-model layer; the final pre-norm state) with the encoder's own, on the same inputs.
func TestGoldenStages(t *testing.T) {
	path, err := golden.Path("debug/debug_textenc_ti2i_two.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	dbg := loadCase(t, path)
	// The debug stages are those of this pipeline case's positive prompt.
	pipePath, err := golden.Path("pipeline_ti2i_two.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	pipe := loadCase(t, pipePath)
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
	last, err := enc.Encode(context.Background(), int32s(t, pipe, "te0_input_ids"), visionInputs(t, pipe, "te0_", vc.PatchValues()))
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
