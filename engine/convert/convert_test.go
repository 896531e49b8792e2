package convert

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"easel/engine/cmf"
	"easel/engine/quant"
	"easel/engine/safetensors"
	"easel/internal/golden"
)

// quantBudget is the relative RMS error each lossy codec may add to a tensor: the Student-t
// budgets engine/quant records for [4096, 4096] weights (docs/BENCHMARKS.md), the loosest case.
var quantBudget = map[quant.DType]float64{quant.Q4TP: 0.145, quant.Q8_2F: 0.042, quant.Q8Row: 0.047, quant.F16: 0.00023}

// tinySnapshot is the folder of the tiny reference snapshot.
func tinySnapshot(t *testing.T) string {
	t.Helper()
	dir, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// convertTiny converts the tiny reference snapshot into a temporary folder.
func convertTiny(t *testing.T, p Profile) (string, *Result) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "tiny-"+string(p)+".cmf")
	res, err := Convert(context.Background(), tinySnapshot(t), out, Options{Profile: p})
	if err != nil {
		t.Fatalf("convert with profile %s: %v", p, err)
	}
	return out, res
}

// sourceTensors reads every tensor of the tiny snapshot, keyed by "component/name".
func sourceTensors(t *testing.T) map[string]*safetensors.Tensor {
	t.Helper()
	all := map[string]*safetensors.Tensor{}
	for _, c := range []string{"transformer", "text_encoder", "vae"} {
		files, _ := filepath.Glob(filepath.Join(tinySnapshot(t), c, "*.safetensors"))
		for _, path := range files {
			f, err := safetensors.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			for _, n := range f.Names() {
				all[c+"/"+n] = f.Tensor(n)
			}
		}
	}
	return all
}

// sourceName maps a CMF tensor name back to its snapshot tensor.
func sourceName(out string) string {
	switch {
	case strings.HasPrefix(out, "dit."):
		return "transformer/" + strings.TrimPrefix(out, "dit.")
	case strings.HasPrefix(out, "te."):
		return "text_encoder/model.language_model." + strings.TrimPrefix(out, "te.")
	case out == "vis.patch_embed.weight":
		return "text_encoder/model.visual.patch_embed.proj.weight"
	case out == "vis.patch_embed.bias":
		return "text_encoder/model.visual.patch_embed.proj.bias"
	case strings.HasPrefix(out, "vis."):
		return "text_encoder/model.visual." + strings.ReplaceAll(strings.TrimPrefix(out, "vis."), "deepstack.", "deepstack_merger_list.")
	case strings.HasPrefix(out, "vae."):
		return "vae/" + strings.TrimPrefix(out, "vae.")
	}
	return ""
}

func relRMS(want, got []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(want[i]) - float64(got[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// Every profile converts the tiny snapshot; read back, each weight equals its source exactly
// when stored at source precision or as f32, and within its codec's budget when quantized.
func TestConvertTinySnapshot(t *testing.T) {
	src := sourceTensors(t)
	wantDType := map[Profile]map[string]quant.DType{
		ProfileCortiq: {
			"dit.transformer_blocks.0.attn.to_q.weight":   quant.Q4TP,
			"dit.transformer_blocks.1.img_mlp.out.weight": quant.Q4TP,
			"dit.img_in.weight":                           quant.BF16,
			"dit.transformer_blocks.0.attn.norm_q.weight": quant.F32,
			"te.embed_tokens.weight":                      quant.Q8Row,
			"te.layers.0.self_attn.q_proj.weight":         quant.Q8_2F,
			"te.layers.1.input_layernorm.weight":          quant.F32,
			"vis.blocks.0.attn.qkv.weight":                quant.Q8_2F,
			"vis.deepstack.1.linear_fc2.weight":           quant.Q8_2F,
			"vis.patch_embed.weight":                      quant.BF16,
			"vis.pos_embed.weight":                        quant.F32,
			"vae.decoder.conv_in.weight":                  quant.F16,
			"vae.decoder.mid_block.resnets.0.norm1.gamma": quant.F32,
			"vae.decoder.conv_in.bias":                    quant.F32,
		},
		ProfileQ8: {
			"dit.transformer_blocks.0.attn.to_q.weight": quant.Q8_2F,
			"te.embed_tokens.weight":                    quant.Q8Row,
		},
		ProfileF16: {
			"dit.transformer_blocks.0.attn.to_q.weight": quant.BF16,
			"te.embed_tokens.weight":                    quant.BF16,
			"te.layers.0.self_attn.q_proj.weight":       quant.BF16,
			"vis.blocks.0.attn.qkv.weight":              quant.BF16,
			"vae.decoder.conv_in.weight":                quant.F32,
			"te.layers.1.input_layernorm.weight":        quant.F32,
		},
	}
	for _, p := range Profiles {
		t.Run(string(p), func(t *testing.T) {
			path, res := convertTiny(t, p)
			f, err := cmf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Verify(nil); err != nil {
				t.Errorf("the converted file fails verification: %v", err)
			}
			h := f.Header()
			if h.Arch.Name != "qwen_image21" || h.QuantType != p.quantType() || h.Arch.HiddenSize != 32 || h.Arch.NumLayers != 2 {
				t.Errorf("header arch %+v quant_type %q", h.Arch, h.QuantType)
			}
			tok, _ := os.ReadFile(filepath.Join(tinySnapshot(t), "processor", "tokenizer.json"))
			if !bytes.Equal(f.Vocab(), tok) {
				t.Errorf("vocab section is not processor/tokenizer.json verbatim")
			}
			checkConfigBlobs(t, f)
			names := f.Names()
			// cortiq's six config blobs in its order, then Easel's processor settings.
			wantBlobs := []string{"dit.config_json", "te.config_json", "vae.config_json", "qi21.config_json", "qi21.scheduler_json", "vis.config_json", processorBlob}
			nb := len(wantBlobs)
			if !slices.Equal(names[:nb], wantBlobs) {
				t.Errorf("first tensors %v, want the config blobs %v", names[:nb], wantBlobs)
			}
			proc, _ := os.ReadFile(filepath.Join(tinySnapshot(t), "processor", "processor_config.json"))
			if got, err := f.ConfigJSON(processorBlob); err != nil || !bytes.Equal(got, proc) {
				t.Errorf("%s is not processor/processor_config.json verbatim (%v)", processorBlob, err)
			}
			checkComponentOrder(t, names[nb:])
			if len(names) != res.Tensors {
				t.Errorf("file holds %d tensors, result says %d", len(names), res.Tensors)
			}
			if e, ok := f.Entry("te.norm.weight"); !ok || e.DType != quant.F32 {
				t.Errorf("te.norm.weight (the final norm, for writing text) stored as %v (present %v), want f32", e.DType, ok)
			}
			if _, ok := f.Entry("te.lm_head.weight"); ok {
				t.Errorf("te.lm_head.weight written for a snapshot that ties it to the embedding")
			}
			for _, skipped := range []string{"decoder.up_blocks.0.upsampler.time_conv.weight"} {
				if !slices.ContainsFunc(res.Skipped, func(s string) bool { return strings.Contains(s, skipped) }) {
					t.Errorf("%s is not listed as skipped: %v", skipped, res.Skipped)
				}
			}
			for name, d := range wantDType[p] {
				if e, ok := f.Entry(name); !ok || e.DType != d {
					t.Errorf("%s stored as %v (present %v), want %v", name, e.DType, ok, d)
				}
			}
			checkWeights(t, f, names[nb:], src)
		})
	}
}

// checkComponentOrder asserts the dit, te/vis, vae grouping of cmf.md §10.2.
func checkComponentOrder(t *testing.T, names []string) {
	rank := func(n string) int {
		switch {
		case strings.HasPrefix(n, "dit."):
			return 0
		case strings.HasPrefix(n, "te."), strings.HasPrefix(n, "vis."):
			return 1
		case strings.HasPrefix(n, "vae."):
			return 2
		}
		return 3
	}
	for i := 1; i < len(names); i++ {
		if rank(names[i]) < rank(names[i-1]) || rank(names[i]) == 3 {
			t.Fatalf("tensor %s after %s breaks the dit, te/vis, vae order", names[i], names[i-1])
		}
	}
}

func checkWeights(t *testing.T, f *cmf.File, names []string, src map[string]*safetensors.Tensor) {
	t.Helper()
	for _, name := range names {
		st := src[sourceName(name)]
		if st == nil {
			t.Errorf("%s has no source tensor", name)
			continue
		}
		got, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := st.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		dec, err := quant.Dequantize(got)
		if err != nil {
			t.Fatal(err)
		}
		if got.Cols()*got.Rows() != len(want) {
			t.Errorf("%s: %v holds %d values, source %v holds %d", name, got.Shape, len(dec), st.Shape, len(want))
			continue
		}
		budget, lossy := quantBudget[got.DType]
		if !lossy {
			if !slices.Equal(dec, want) {
				t.Errorf("%s stored as %v is not bit-exact with its %s source", name, got.DType, st.DType)
			}
			continue
		}
		if e := relRMS(want, dec); e > budget {
			t.Errorf("%s stored as %v: relative RMS error %.4f, budget %.4f", name, got.DType, e, budget)
		}
	}
}

// Reading the file and writing it again through engine/cmf gives the same bytes, and so does
// converting the snapshot a second time.
func TestConvertedFileRewritesByteIdentical(t *testing.T) {
	path, _ := convertTiny(t, ProfileCortiq)
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := cmf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	again := filepath.Join(t.TempDir(), "rewritten.cmf")
	w, err := cmf.Create(again, cmf.Options{ExpectedTensors: len(f.Entries())})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range f.Entries() {
		tn, err := f.Tensor(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(e.Name, e.DType, e.Shape, tn.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SetHeader(*f.Header()); err != nil {
		t.Fatal(err)
	}
	w.SetVocab(f.Vocab())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("write → read → write changed the file (%d → %d bytes)", len(first), len(second))
	}
	reconverted, _ := convertTiny(t, ProfileCortiq)
	third, err := os.ReadFile(reconverted)
	if err != nil {
		t.Fatal(err)
	}
	// The provenance records the snapshot folder, the same both times; nothing else may differ.
	if !bytes.Equal(first, third) {
		t.Errorf("converting the same snapshot twice gave different files")
	}
}

// checkConfigBlobs reads back the JSON tensors the engine takes its geometry from.
func checkConfigBlobs(t *testing.T, f *cmf.File) {
	t.Helper()
	var te struct {
		Hidden    int   `json:"hidden_size"`
		FinalNorm *bool `json:"final_norm"`
	}
	var defaults map[string]any
	for name, v := range map[string]any{"te.config_json": &te, "qi21.config_json": &defaults} {
		b, err := f.ConfigJSON(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if te.Hidden != 32 || te.FinalNorm == nil || *te.FinalNorm {
		t.Errorf("te.config_json: hidden_size %d, final_norm %v; want 32 and false", te.Hidden, te.FinalNorm)
	}
	if defaults["latent_channels"] != 64.0 || defaults["steps"] != 40.0 || defaults["vae_scale"] != 16.0 {
		t.Errorf("qi21.config_json = %v", defaults)
	}
	for _, name := range []string{"dit.config_json", "vae.config_json", "qi21.scheduler_json"} {
		b, _ := f.ConfigJSON(name)
		file := map[string]string{"dit.config_json": "transformer/config.json", "vae.config_json": "vae/config.json", "qi21.scheduler_json": "scheduler/scheduler_config.json"}[name]
		want, _ := os.ReadFile(filepath.Join(tinySnapshot(t), file))
		if !bytes.Equal(b, want) {
			t.Errorf("%s is not %s verbatim", name, file)
		}
	}
}
