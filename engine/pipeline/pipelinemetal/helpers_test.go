package pipelinemetal

import (
	"os"
	"testing"

	"easel/engine/convert"
	"easel/engine/pipeline"
	"easel/engine/qwen3vl"
	"easel/internal/pipelinecase"
	"easel/internal/tinymodel"
)

func TestMain(m *testing.M) {
	code := m.Run()
	tinymodel.RemoveAll()
	os.Exit(code)
}

// tinyModel is the tiny reference model converted once per test binary with the f16 profile
// (every weight at the snapshot's own precision), whose bf16 block weights the Metal kernels do
// not read.
func tinyModel(t testing.TB) string {
	return tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16})
}

// caseRequest is the request an artist would make for a case: its prompt strings, condition PNGs,
// settings and seed, nothing recorded.
func caseRequest(t *testing.T, c *pipelinecase.Case) pipeline.Request {
	return pipeline.Request{Prompt: c.Prompt, NegativePrompt: c.Negative, Images: c.CondImages(t),
		Width: c.Width, Height: c.Height, Resolution: c.Resolution, Steps: c.Steps, CFG: c.CFG, Seed: c.Seed}
}

// encodeCase encodes one of the case's recorded prompts (te0 or te1): its input_ids without the
// left padding, and the system-prefix length the prompt builder computes for the same text.
func encodeCase(t *testing.T, p *pipeline.Pipeline, c *pipelinecase.Case, prefix, text string, vision []qwen3vl.VisionInput) *pipeline.Conditioning {
	t.Helper()
	ids := c.Ints(t, prefix+"_input_ids")
	mask := c.Ints(t, prefix+"_attention_mask")
	var kept []int32
	for i, id := range ids {
		if mask[i] != 0 {
			kept = append(kept, id)
		}
	}
	built, err := p.BuildPrompt(text, c.ConditionsFor(t, prefix))
	if err != nil {
		t.Fatal(err)
	}
	cond, err := p.EncodePrompt(t.Context(), kept, built.Drop, vision)
	if err != nil {
		t.Fatal(err)
	}
	return cond
}

// capture wraps a placement so that the test sees the Placement it returned.
func capture[N, C any](place pipeline.Place[N, C], into *pipeline.Placement) pipeline.Place[N, C] {
	return func(s pipeline.Site, cpu C) (N, pipeline.Placement, error) {
		n, pl, err := place(s, cpu)
		*into = pl
		return n, pl, err
	}
}

// behaviourRequest is the request a test of behaviour builds (pipelinecase.BehaviourRequest): CFG
// (two programs) with images made-up condition images, whatever cases the folder holds.
func behaviourRequest(t *testing.T, images int) pipeline.Request {
	t.Helper()
	b := pipelinecase.BehaviourRequest(t, images)
	return pipeline.Request{Prompt: b.Prompt, NegativePrompt: b.Negative, Images: b.Images, Width: b.Width, Height: b.Height,
		Resolution: b.Resolution, Steps: b.Steps, CFG: b.CFG, Seed: b.Seed}
}
