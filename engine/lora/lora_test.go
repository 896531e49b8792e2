package lora_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/lora"
	"easel/engine/lora/loratest"
	"easel/engine/quant"
	"easel/engine/safetensors"
)

// testLayers is a two-block model with the DiT's layer names and small shapes.
func testLayers() []lora.Layer {
	const D, F = 8, 12
	ls := []lora.Layer{{"img_in", D, 4}, {"proj_out", 4, D}, {"modulation.1", 4 * D, D}, {"time_text_embed.timestep_embedder.linear_1", D, 16}, {"txt_in.in_layer", D, 6}}
	for _, b := range []string{"0", "1"} {
		p := "transformer_blocks." + b + "."
		ls = append(ls, lora.Layer{p + "attn.to_q", D, D}, lora.Layer{p + "attn.to_k", D, D}, lora.Layer{p + "attn.to_v", D, D},
			lora.Layer{p + "attn.to_out.0", D, D}, lora.Layer{p + "img_mlp.gate_layer", F, D}, lora.Layer{p + "img_mlp.proj", F, D},
			lora.Layer{p + "img_mlp.out", D, F})
	}
	return ls
}

func bind(t *testing.T, tensors []*safetensors.Tensor, meta map[string]string) (*lora.Adapter, error) {
	t.Helper()
	buf, err := safetensors.Encode(tensors, meta)
	if err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Parse(buf)
	if err != nil {
		t.Fatal(err)
	}
	return lora.Bind(f, testLayers())
}

// dense is ΔW = Σ scale·B·A (+ patches) per layer as the adapter holds it.
func dense(t *testing.T, a *lora.Adapter) map[string]loratest.Delta {
	t.Helper()
	out := map[string]loratest.Delta{}
	dq := func(q *quant.Tensor) []float32 {
		v, err := quant.Dequantize(q)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, f := range a.Factors {
		A, B := dq(f.A), dq(f.B)
		o, in, r := f.B.Shape[0], f.A.Shape[1], f.Rank
		d := out[f.Layer]
		if d.W == nil {
			d.W = make([]float32, o*in)
		}
		for i := 0; i < o; i++ {
			for k := 0; k < r; k++ {
				for c := 0; c < in; c++ {
					d.W[i*in+c] += f.Scale * B[i*r+k] * A[k*in+c]
				}
			}
		}
		out[f.Layer] = d
	}
	for _, p := range a.Patches {
		d := out[p.Layer]
		if p.Weight != nil {
			d.W = dq(p.Weight)
		}
		d.Bias = p.Bias
		out[p.Layer] = d
	}
	return out
}

// TestFormatsBindToEveryLayer writes a random file in each format and checks that every tensor
// matched and that the adapter stands for the same dense deltas the file was built from.
func TestFormatsBindToEveryLayer(t *testing.T) {
	layers := testLayers()
	for _, f := range loratest.Formats {
		t.Run(f.String(), func(t *testing.T) {
			tensors, want := loratest.Random(layers, f, 3, 0.5, 7)
			a, err := bind(t, tensors, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.Report.Matched != len(tensors) || a.Report.Tensors != len(tensors) || a.Report.Warning() != "" {
				t.Fatalf("matched %d of %d (file has %d): %s", a.Report.Matched, a.Report.Tensors, len(tensors), a.Report.Warning())
			}
			if len(a.Report.Layers) != len(layers) {
				t.Errorf("adapter changes %d layers, want all %d", len(a.Report.Layers), len(layers))
			}
			got := dense(t, a)
			for name, w := range want {
				g := got[name]
				if len(g.W) != len(w.W) || len(g.Bias) != len(w.Bias) {
					t.Fatalf("%s: got %d weights %d biases, want %d, %d", name, len(g.W), len(g.Bias), len(w.W), len(w.Bias))
				}
				for i := range w.W {
					if d := math.Abs(float64(g.W[i] - w.W[i])); d > 1e-5*(1+math.Abs(float64(w.W[i]))) {
						t.Fatalf("%s: ΔW[%d] = %v, want %v", name, i, g.W[i], w.W[i])
					}
				}
				for i := range w.Bias {
					if g.Bias[i] != w.Bias[i] {
						t.Fatalf("%s: Δb[%d] = %v, want %v", name, i, g.Bias[i], w.Bias[i])
					}
				}
			}
		})
	}
}

func factor(name string, rows, cols int) *safetensors.Tensor {
	return safetensors.F32Tensor(name, []int{rows, cols}, make([]float32, rows*cols))
}

func TestKeyVariants(t *testing.T) {
	cases := []struct{ down, up, layer string }{
		{"transformer_blocks.0.attn.to_q.lora_A.weight", "transformer_blocks.0.attn.to_q.lora_B.weight", "transformer_blocks.0.attn.to_q"},
		{"base_model.model.transformer_blocks.1.attn.to_out.0.lora_A.default.weight", "base_model.model.transformer_blocks.1.attn.to_out.0.lora_B.default.weight", "transformer_blocks.1.attn.to_out.0"},
		{"model.diffusion_model.img_in.lora.down.weight", "model.diffusion_model.img_in.lora.up.weight", "img_in"},
		{"lora_unet_transformer_blocks_1_img_mlp_gate_layer.lora_down.weight", "lora_unet_transformer_blocks_1_img_mlp_gate_layer.lora_up.weight", "transformer_blocks.1.img_mlp.gate_layer"},
		{"lora_unet_modulation_1.lora_down.weight", "lora_unet_modulation_1.lora_up.weight", "modulation.1"},
		{"lycoris_txt_in_in_layer.lora_down.weight", "lycoris_txt_in_in_layer.lora_up.weight", "txt_in.in_layer"},
		{"unet.proj_out_lora.down.weight", "unet.proj_out_lora.up.weight", "proj_out"},
		{"transformer.time_text_embed.timestep_embedder.linear_1.lora_linear_layer.down.weight", "transformer.time_text_embed.timestep_embedder.linear_1.lora_linear_layer.up.weight", "time_text_embed.timestep_embedder.linear_1"},
		{"transformer_blocks.0.attn.to_v.lora_A", "transformer_blocks.0.attn.to_v.lora_B", "transformer_blocks.0.attn.to_v"},
	}
	shapes := map[string][2]int{}
	for _, l := range testLayers() {
		shapes[l.Name] = [2]int{l.Out, l.In}
	}
	for _, c := range cases {
		s := shapes[c.layer]
		a, err := bind(t, []*safetensors.Tensor{factor(c.down, 2, s[1]), factor(c.up, s[0], 2)}, nil)
		if err != nil {
			t.Errorf("%s: %v", c.down, err)
			continue
		}
		if len(a.Factors) != 1 || a.Factors[0].Layer != c.layer || a.Factors[0].Rank != 2 || a.Factors[0].Scale != 1 {
			t.Errorf("%s: bound to %+v, want %s rank 2 scale 1", c.down, a.Factors, c.layer)
		}
	}
}

func TestAlphaScales(t *testing.T) {
	down, up := factor("lora_unet_img_in.lora_down.weight", 4, 4), factor("lora_unet_img_in.lora_up.weight", 8, 4)
	a, err := bind(t, []*safetensors.Tensor{down, up, safetensors.F32Tensor("lora_unet_img_in.alpha", nil, []float32{2})}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Factors[0].Scale != 0.5 {
		t.Errorf("alpha 2 over rank 4: scale %v, want 0.5", a.Factors[0].Scale)
	}
	pd, pu := factor("transformer.img_in.lora_A.weight", 4, 4), factor("transformer.img_in.lora_B.weight", 8, 4)
	meta := map[string]string{"lora_adapter_metadata": `{"r": 4, "lora_alpha": 8, "alpha_pattern": {"img_in": 2}}`}
	if a, err = bind(t, []*safetensors.Tensor{pd, pu}, meta); err != nil {
		t.Fatal(err)
	}
	if a.Factors[0].Scale != 0.5 {
		t.Errorf("PEFT alpha_pattern 2 over rank 4: scale %v, want 0.5", a.Factors[0].Scale)
	}
	meta["lora_adapter_metadata"] = `{"r": 4, "lora_alpha": 8}`
	if a, err = bind(t, []*safetensors.Tensor{pd, pu}, meta); err != nil {
		t.Fatal(err)
	}
	if a.Factors[0].Scale != 2 {
		t.Errorf("PEFT lora_alpha 8 over rank 4: scale %v, want 2", a.Factors[0].Scale)
	}
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		name    string
		tensors []*safetensors.Tensor
		meta    map[string]string
		want    []string
	}{
		{"sdxl", []*safetensors.Tensor{
			factor("lora_unet_down_blocks_0_attentions_0_proj_in.lora_down.weight", 2, 8),
			factor("lora_unet_down_blocks_0_attentions_0_proj_in.lora_up.weight", 8, 2),
			safetensors.F32Tensor("lora_unet_down_blocks_0_attentions_0_proj_in.alpha", nil, []float32{2}),
			factor("lora_te1_text_model_encoder_layers_0_mlp_fc1.lora_down.weight", 2, 8),
		}, nil, []string{"matched 0 of 4 tensors", "another model"}},
		{"shape", []*safetensors.Tensor{factor("transformer_blocks.0.attn.to_q.lora_A.weight", 2, 9), factor("transformer_blocks.0.attn.to_q.lora_B.weight", 8, 2)}, nil,
			[]string{"transformer_blocks.0.attn.to_q.lora_A.weight", "[2 9]", "another size"}},
		{"rank", []*safetensors.Tensor{factor("transformer_blocks.0.attn.to_q.lora_A.weight", 2, 8), factor("transformer_blocks.0.attn.to_q.lora_B.weight", 8, 3)}, nil,
			[]string{"transformer_blocks.0.attn.to_q.lora_B.weight", "[8 3]"}},
		{"diff shape", []*safetensors.Tensor{factor("diffusion_model.proj_out.diff", 8, 4)}, nil, []string{"diffusion_model.proj_out.diff", "[8 4]"}},
		{"half pair", []*safetensors.Tensor{factor("transformer_blocks.0.attn.to_q.lora_B.weight", 8, 3)}, nil, []string{"no matching down/A"}},
		{"loha", []*safetensors.Tensor{factor("lycoris_img_in.hada_w1_a", 8, 2)}, nil, []string{"LoHa"}},
		{"dora", []*safetensors.Tensor{factor("transformer.img_in.lora_A.weight", 2, 4), factor("transformer.img_in.lora_B.weight", 8, 2)},
			map[string]string{"lora_adapter_metadata": `{"r":2,"lora_alpha":2,"use_dora":true}`}, []string{"DoRA"}},
		{"int factor", []*safetensors.Tensor{{Name: "transformer.img_in.lora_A.weight", DType: "I32", Shape: []int{2, 4}, Data: make([]byte, 32)}, factor("transformer.img_in.lora_B.weight", 8, 2)}, nil,
			[]string{"transformer.img_in.lora_A.weight", "F32, F16 or BF16"}},
	}
	for _, c := range cases {
		_, err := bind(t, c.tensors, c.meta)
		if err == nil {
			t.Errorf("%s: bound without error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.name, err, w)
			}
		}
	}
}

func TestPartialMatchIsReported(t *testing.T) {
	tensors, _ := loratest.Random(testLayers()[:3], loratest.Kohya, 2, 1, 1)
	tensors = append(tensors, factor("lora_unet_transformer_blocks_40_attn_to_q.lora_down.weight", 2, 8), factor("lora_unet_transformer_blocks_40_attn_to_q.lora_up.weight", 8, 2))
	a, err := bind(t, tensors, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := a.Report.Warning()
	if a.Report.Matched != 9 || !strings.Contains(w, "matched 9 of 11 tensors") || !strings.Contains(w, "transformer_blocks_40") {
		t.Errorf("matched %d; warning %q", a.Report.Matched, w)
	}
}

func TestPresets(t *testing.T) {
	p, err := lora.PresetFor(map[string]string{lora.PresetMetadataKey: `{"name":"Turbo","schedule":"turbo","steps":8,"cfg":1}`}, "")
	if err != nil || p == nil || p.Steps != 8 || p.Schedule != "turbo" || p.Source != "metadata" {
		t.Fatalf("metadata preset %+v, %v", p, err)
	}
	if p, err = lora.PresetFor(map[string]string{lora.PresetMetadataKey: `{"schedule":"turbo","sigmas":[1,0.5,0.25]}`}, ""); err != nil || p.Steps != 3 || p.CFG != 1 {
		t.Fatalf("grid preset %+v, %v", p, err)
	}
	for _, bad := range []string{`{"schedule":"karras","steps":4}`, `{"steps":0}`, `{"schedule":"turbo","sigmas":[0.5,0.9]}`, `nope`} {
		if _, err := lora.PresetFor(map[string]string{lora.PresetMetadataKey: bad}, ""); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	lora.KnownPresets["abc"] = lora.Preset{Name: "Lightning", Steps: 4, CFG: 1, Schedule: "lightning"}
	defer delete(lora.KnownPresets, "abc")
	if p, err = lora.PresetFor(nil, "ABC"); err != nil || p == nil || p.Steps != 4 || p.Source != "known file" {
		t.Fatalf("known preset %+v, %v", p, err)
	}
	if p, err = lora.PresetFor(nil, "def"); p != nil || err != nil {
		t.Errorf("unknown file: %+v, %v", p, err)
	}
}

func TestPresetFileBesideALoRAFollowsItsHash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "turbo.safetensors")
	want := lora.Preset{Name: "Turbo 8-step", Steps: 8, CFG: 1, Schedule: "default"}
	if lora.HasPresetFile(path) {
		t.Fatal("a preset file before any was written")
	}
	if err := lora.WritePresetFile(path, "ABCD", want); err != nil {
		t.Fatal(err)
	}
	if !lora.HasPresetFile(path) {
		t.Fatal("no preset file after writing one")
	}
	p, err := lora.PresetForFile(path, nil, "abcd")
	if err != nil || p == nil || p.Steps != 8 || p.Name != "Turbo 8-step" || p.Source != "preset file" {
		t.Fatalf("preset file: %+v, %v", p, err)
	}
	// Another file under the same name: the preset does not follow it.
	if p, err = lora.PresetForFile(path, nil, "ef01"); p != nil || err != nil {
		t.Errorf("a replaced file kept the preset: %+v, %v", p, err)
	}
	// The file's own metadata wins.
	if p, err = lora.PresetForFile(path, map[string]string{lora.PresetMetadataKey: `{"schedule":"lightning","steps":4}`}, "abcd"); err != nil || p.Steps != 4 || p.Source != "metadata" {
		t.Errorf("metadata preset: %+v, %v", p, err)
	}
	if err := os.WriteFile(path+lora.PresetFileSuffix, []byte("nope"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := lora.PresetForFile(path, nil, "abcd"); err == nil || !strings.Contains(err.Error(), "preset file") {
		t.Errorf("a malformed preset file: %v", err)
	}
	if err := lora.WritePresetFile(path, "abcd", lora.Preset{Steps: 0}); err == nil {
		t.Error("a preset of 0 steps was written")
	}
}
