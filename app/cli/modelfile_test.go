package cli

import (
	"os"
	"path/filepath"
	"testing"

	"easel/engine/cmf"
	"easel/engine/quant"
	"easel/engine/safetensors"
	"easel/internal/golden"
)

// smallModel writes a container in cortiq's Qwen-Image-2.1 layout from the tiny reference
// snapshot: its config files as u8 blobs, its transformer weights (bf16, the block q projections
// as q4tp-sized payloads), one q8_2f text-encoder projection, and its real tokenizer.json as vocab.
// It returns the path and how many tensors each component got.
func smallModel(t *testing.T) (string, map[string]int) {
	t.Helper()
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join(snap, rel))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	path := filepath.Join(t.TempDir(), "small.cmf")
	w, err := cmf.Create(path, cmf.Options{ExpectedTensors: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	zero := 0
	if err := w.SetHeader(cmf.Header{
		Arch: cmf.Arch{Name: "qwen_image21", HiddenSize: 32, IntermediateSize: 96, NumLayers: 2, NumAttentionHeads: 2,
			NumKVHeads: 1, HeadDim: 128, VocabSize: 151936, LayerTypes: []string{"FullAttention", "FullAttention"},
			RMSNormEps: 1e-6, MaxPositionEmbeddings: 262144, LinearConvKernelDim: &zero, LinearNumKeyHeads: &zero, LinearNumValueHeads: &zero},
		QuantType:  "Q4_BLOCK",
		Provenance: []byte(`{"tool":"easel test","pipeline":"qwen-image-2.1"}`),
	}); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	add := func(component, name string, d quant.DType, shape []int, payload []byte) {
		if err := w.AddTensor(component+"."+name, d, shape, payload); err != nil {
			t.Fatal(err)
		}
		counts[component]++
	}
	for _, c := range []struct{ component, name, file string }{
		{"dit", "config_json", "transformer/config.json"},
		{"te", "config_json", "text_encoder/config.json"},
		{"vae", "config_json", "vae/config.json"},
		{"qi21", "scheduler_json", "scheduler/scheduler_config.json"},
	} {
		b := read(c.file)
		add(c.component, c.name, quant.U8, []int{len(b)}, b)
	}
	st, err := safetensors.Open(filepath.Join(snap, "transformer/diffusion_pytorch_model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, name := range st.Names() {
		tt := st.Tensor(name)
		if len(tt.Shape) == 2 && filepath.Ext(name) == ".weight" && tt.Shape[1]%32 == 0 && len(name) > 20 && name[:20] == "transformer_blocks.0" {
			n, _ := quant.PayloadSize(quant.Q4TP, tt.Shape)
			add("dit", name, quant.Q4TP, tt.Shape, make([]byte, n))
			continue
		}
		add("dit", name, quant.BF16, tt.Shape, tt.Data)
	}
	n, _ := quant.PayloadSize(quant.Q8_2F, []int{96, 32})
	add("te", "layers.0.mlp.gate_proj.weight", quant.Q8_2F, []int{96, 32}, make([]byte, n))
	w.SetVocab(read("processor/tokenizer.json"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, counts
}
