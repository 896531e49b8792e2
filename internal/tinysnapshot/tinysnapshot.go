// Package tinysnapshot serves the tiny reference model's Hugging Face snapshot (internal/golden's)
// as a quant.Source under a converted .cmf's names, without converting it: the one "tiny snapshot
// as a weight source" of the networks' tests. DiT, TextEncoder and VAE each open one network's
// folder; the weights keep their stored float dtype and are read in place, and the config blobs
// (dit.config_json, te.config_json, vis.config_json, vae.config_json) are the snapshot's files.
//
// It imports no network and not the converter, so a network's own tests can use it
// (internal/tinymodel converts the snapshot instead, for tests of the whole file).
package tinysnapshot

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

// Source is one network of the snapshot under .cmf names.
type Source struct {
	file    *safetensors.File
	configs map[string][]byte
	// stored maps a .cmf name to the snapshot's name, or false when the file has no such tensor.
	stored func(name string) (string, bool)
	// view reshapes a tensor as the .cmf holds it (the patch Conv3d as a matrix), or nil.
	view func(name string, shape []int) []int
	// missingIsNil answers a name the network does not have with (nil, nil) instead of an error,
	// as cmf.File does.
	missingIsNil bool
	what         string
}

// open maps folder/file of the snapshot for the test's lifetime.
func open(tb testing.TB, folder, file string) (*safetensors.File, string) {
	tb.Helper()
	snap, err := golden.ModelSnapshot()
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(snap, folder)
	f, err := safetensors.Open(filepath.Join(dir, file))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f, dir
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// DiT is the transformer: "dit." + the diffusers name, dit.config_json from transformer/config.json.
// A name the file lacks answers (nil, nil), as a .cmf does.
func DiT(tb testing.TB) *Source {
	f, dir := open(tb, "transformer", "diffusion_pytorch_model.safetensors")
	return &Source{
		file:    f,
		configs: map[string][]byte{"dit.config_json": readFile(tb, filepath.Join(dir, "config.json"))},
		stored: func(name string) (string, bool) {
			return strings.CutPrefix(name, "dit.")
		},
		missingIsNil: true,
		what:         "the snapshot's transformer",
	}
}

// VAE is the autoencoder: "vae." + the diffusers name, time_conv left out (as the converter does),
// vae.config_json from vae/config.json.
func VAE(tb testing.TB) *Source {
	f, dir := open(tb, "vae", "diffusion_pytorch_model.safetensors")
	return &Source{
		file:    f,
		configs: map[string][]byte{"vae.config_json": readFile(tb, filepath.Join(dir, "config.json"))},
		stored: func(name string) (string, bool) {
			hf, ok := strings.CutPrefix(name, "vae.")
			return hf, ok && !strings.Contains(name, ".time_conv.")
		},
		what: "the snapshot's VAE",
	}
}

// TextEncoder is Qwen3-VL under cortiq's names (docs/reference/cmf.md §10.4):
// model.language_model.* → te.*, model.visual.* → vis.* (deepstack_merger_list. → deepstack., the
// patch Conv3d as vis.patch_embed.{weight,bias} with the weight viewed as [out, rest]), and the
// text_config / vision_config blocks of config.json as te.config_json / vis.config_json.
func TextEncoder(tb testing.TB) *Source {
	f, dir := open(tb, "text_encoder", "model.safetensors")
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(readFile(tb, filepath.Join(dir, "config.json")), &cfg); err != nil {
		tb.Fatalf("%s/config.json: %v", dir, err)
	}
	return &Source{
		file:    f,
		configs: map[string][]byte{"te.config_json": cfg["text_config"], "vis.config_json": cfg["vision_config"]},
		stored: func(name string) (string, bool) {
			switch {
			case strings.HasPrefix(name, "te."):
				return "model.language_model." + strings.TrimPrefix(name, "te."), true
			case name == "vis.patch_embed.weight" || name == "vis.patch_embed.bias":
				return "model.visual.patch_embed.proj." + strings.TrimPrefix(name, "vis.patch_embed."), true
			case strings.HasPrefix(name, "vis.deepstack."):
				return "model.visual.deepstack_merger_list." + strings.TrimPrefix(name, "vis.deepstack."), true
			case strings.HasPrefix(name, "vis."):
				return "model.visual." + strings.TrimPrefix(name, "vis."), true
			}
			return "", false
		},
		view: func(name string, shape []int) []int {
			if name != "vis.patch_embed.weight" {
				return shape
			}
			rest := 1
			for _, v := range shape[1:] {
				rest *= v
			}
			return []int{shape[0], rest}
		},
		what: "the snapshot's text encoder",
	}
}

var floatDTypes = map[string]quant.DType{"F32": quant.F32, "F16": quant.F16, "BF16": quant.BF16}

// Tensor is the named tensor, read in place from the snapshot's file.
func (s *Source) Tensor(name string) (*quant.Tensor, error) {
	if js, ok := s.configs[name]; ok {
		return &quant.Tensor{Name: name, DType: quant.U8, Shape: []int{len(js)}, Data: js}, nil
	}
	hf, ok := s.stored(name)
	var st *safetensors.Tensor
	if ok {
		st = s.file.Tensor(hf)
	}
	if st == nil {
		if s.missingIsNil {
			return nil, nil
		}
		return nil, fmt.Errorf("no tensor %q in %s", name, s.what)
	}
	d, ok := floatDTypes[st.DType]
	if !ok {
		return nil, fmt.Errorf("tensor %s of %s is %s, not a float type", hf, s.what, st.DType)
	}
	shape := st.Shape
	if s.view != nil {
		shape = s.view(name, shape)
	}
	return &quant.Tensor{Name: name, DType: d, Shape: shape, Data: st.Data}, nil
}
