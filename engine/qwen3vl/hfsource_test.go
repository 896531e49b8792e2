package qwen3vl

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/quant"
	"easel/engine/safetensors"
	"easel/internal/golden"
)

// hfSource serves a Hugging Face text_encoder folder under cortiq's names (cmf.md §10.4):
// model.language_model.* → te.*, model.visual.* → vis.* (deepstack_merger_list. → deepstack.,
// the patch Conv3d as vis.patch_embed.{weight,bias} with the weight viewed as [out, rest]), and
// the text_config / vision_config blocks of config.json as te.config_json / vis.config_json.
type hfSource struct {
	file    *safetensors.File
	configs map[string][]byte
}

func openHFTextEncoder(t testing.TB) *hfSource {
	t.Helper()
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(snap, "text_encoder")
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("%s/config.json: %v", dir, err)
	}
	f, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &hfSource{file: f, configs: map[string][]byte{
		"te.config_json":  cfg["text_config"],
		"vis.config_json": cfg["vision_config"],
	}}
}

var hfDTypes = map[string]quant.DType{"F32": quant.F32, "F16": quant.F16, "BF16": quant.BF16}

func (s *hfSource) Tensor(name string) (*quant.Tensor, error) {
	if js, ok := s.configs[name]; ok {
		return &quant.Tensor{Name: name, DType: quant.U8, Shape: []int{len(js)}, Data: js}, nil
	}
	var hf string
	switch {
	case strings.HasPrefix(name, "te."):
		hf = "model.language_model." + strings.TrimPrefix(name, "te.")
	case name == "vis.patch_embed.weight" || name == "vis.patch_embed.bias":
		hf = "model.visual.patch_embed.proj." + strings.TrimPrefix(name, "vis.patch_embed.")
	case strings.HasPrefix(name, "vis.deepstack."):
		hf = "model.visual.deepstack_merger_list." + strings.TrimPrefix(name, "vis.deepstack.")
	case strings.HasPrefix(name, "vis."):
		hf = "model.visual." + strings.TrimPrefix(name, "vis.")
	default:
		return nil, fmt.Errorf("no tensor %q in the Hugging Face text encoder", name)
	}
	st := s.file.Tensor(hf)
	if st == nil {
		return nil, fmt.Errorf("no tensor %q (%s) in the Hugging Face text encoder", name, hf)
	}
	d, ok := hfDTypes[st.DType]
	if !ok {
		return nil, fmt.Errorf("tensor %s is %s, not a float type", hf, st.DType)
	}
	shape := st.Shape
	if name == "vis.patch_embed.weight" {
		rest := 1
		for _, v := range shape[1:] {
			rest *= v
		}
		shape = []int{shape[0], rest}
	}
	return &quant.Tensor{Name: name, DType: d, Shape: shape, Data: st.Data}, nil
}
