package qwen3vl

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/ml/cpu"
	"easel/engine/quant"
	"easel/internal/golden"
	"easel/internal/tinysnapshot"
)

// profileSource re-encodes the Hugging Face weights with the codecs of the default .cmf profile
// (cmf.md §10.4): te.embed_tokens q8_row; te.*_proj.weight q8_2f; vis.patch_embed.weight kept
// bf16; other 2-D vis.* weights without "norm" q8_2f; every other tensor f32.
type profileSource struct {
	*tinysnapshot.Source
	cache map[string]*quant.Tensor
}

func profileCodec(name string, t *quant.Tensor) quant.DType {
	switch {
	case t.DType == quant.U8:
		return quant.U8
	case name == "te.embed_tokens.weight":
		return quant.Q8Row
	case strings.HasPrefix(name, "te.") && strings.HasSuffix(name, "_proj.weight") && len(t.Shape) == 2:
		return quant.Q8_2F
	case name == "vis.patch_embed.weight":
		return t.DType
	case strings.HasPrefix(name, "vis.") && strings.HasSuffix(name, ".weight") && len(t.Shape) == 2 && !strings.Contains(name, "norm"):
		return quant.Q8_2F
	}
	return quant.F32
}

func (s *profileSource) Tensor(name string) (*quant.Tensor, error) {
	if t, ok := s.cache[name]; ok {
		return t, nil
	}
	t, err := s.Source.Tensor(name)
	if err != nil {
		return nil, err
	}
	d := profileCodec(name, t)
	if d != t.DType {
		w, err := quant.Dequantize(t)
		if err != nil {
			return nil, err
		}
		data, err := quant.Encode(d, t.Shape, w)
		if err != nil {
			return nil, err
		}
		t = &quant.Tensor{Name: name, DType: d, Shape: t.Shape, Data: data}
	}
	s.cache[name] = t
	return t, nil
}

// quantizedBudget bounds the relative error of the default profile's codecs against the float32
// reference on the golden cases. Measured 0.533–0.541 % on the tiny model (the encoders are
// deterministic; see docs/BENCHMARKS.md); the bound leaves about 10 % headroom over the worst case,
// so a codec change that costs accuracy fails here.
const quantizedBudget = 0.006

func TestQuantizedProfileErrorBudget(t *testing.T) {
	enc, err := NewEncoder(cpu.New(), &profileSource{Source: openHFTextEncoder(t), cache: map[string]*quant.Tensor{}})
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := enc.VisionConfig()
	type check struct{ ids, want, prefix string }
	kinds := map[string]check{
		"textenc":  {ids: "input_ids", want: "last_hidden_prenorm"},
		"pipeline": {ids: "te0_input_ids", want: "dit0_encoder_hidden_states", prefix: "te0_"},
	}
	for kind, ck := range kinds {
		paths, err := golden.Cases(kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			t.Run(strings.TrimSuffix(filepath.Base(p), ".safetensors"), func(t *testing.T) {
				c := loadCase(t, p)
				hidden, err := enc.Encode(context.Background(), int32s(t, c, ck.ids), visionInputs(t, c, ck.prefix, vc.PatchValues()))
				if err != nil {
					t.Fatal(err)
				}
				if kind == "pipeline" {
					if hidden, err = DropPrefixRows(hidden, enc.TextConfig().Hidden, systemPrefixRows); err != nil {
						t.Fatal(err)
					}
				}
				e := golden.RelErr(hidden, float32s(t, c, ck.want))
				if !(e <= quantizedBudget) {
					t.Errorf("q8 profile: relative error %.4g, budget %g", e, quantizedBudget)
				} else {
					t.Logf("q8 profile: relative error %.4g", e)
				}
			})
		}
	}
}
