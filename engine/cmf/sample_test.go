package cmf

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"easel/engine/quant"
	"easel/engine/safetensors"
	"easel/internal/golden"
)

// sampleTensor is one tensor the sample file holds, with the payload that was written.
type sampleTensor struct {
	name    string
	dtype   quant.DType
	shape   []int
	payload []byte
}

// sample is a small container in cortiq's Qwen-Image-2.1 layout: the tiny reference snapshot's
// config files as u8 blobs, its transformer weights as raw bf16 (as cortiq keeps non-block 2-D
// DiT weights), one tensor of each other codec (q4tp, q8_2f, q8_row, f16, f32; payload bytes are
// arbitrary, the container does not interpret them), and a tokenizer file as vocab.
type sample struct {
	header  Header
	tensors []sampleTensor
	vocab   []byte
}

func sampleHeader() Header {
	zero := 0
	return Header{
		Arch: Arch{Name: "qwen_image21", HiddenSize: 32, IntermediateSize: 96, NumLayers: 2, NumAttentionHeads: 2,
			NumKVHeads: 1, HeadDim: 128, VocabSize: 151936, LayerTypes: []string{"FullAttention", "FullAttention"},
			RMSNormEps: 1e-6, MaxPositionEmbeddings: 262144,
			LinearConvKernelDim: &zero, LinearNumKeyHeads: &zero, LinearNumValueHeads: &zero},
		QuantType:  "Q4_BLOCK",
		Provenance: []byte(`{"tool":"easel test","pipeline":"qwen-image-2.1","note":"<&>"}`),
	}
}

// loadSample reads the reference snapshot. vocabFile is relative to the snapshot, e.g.
// "processor/tokenizer.json" (11 MB) or "processor/tokenizer_config.json" (small).
func loadSample(t testing.TB, vocabFile string) *sample {
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
	s := &sample{header: sampleHeader(), vocab: read(vocabFile)}
	for _, c := range []struct{ name, file string }{
		{"dit.config_json", "transformer/config.json"},
		{"te.config_json", "text_encoder/config.json"},
		{"vae.config_json", "vae/config.json"},
		{"qi21.scheduler_json", "scheduler/scheduler_config.json"},
	} {
		b := read(c.file)
		s.tensors = append(s.tensors, sampleTensor{c.name, quant.U8, []int{len(b)}, b})
	}
	st, err := safetensors.Open(filepath.Join(snap, "transformer/diffusion_pytorch_model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, name := range st.Names() {
		if name == "transformer_blocks.0.img_mlp.proj.weight" {
			continue // stored as q4tp below, as cortiq stores block projections
		}
		tt := st.Tensor(name)
		if tt.DType != "BF16" {
			t.Fatalf("reference transformer tensor %s is %s, expected BF16", name, tt.DType)
		}
		s.tensors = append(s.tensors, sampleTensor{"dit." + name, quant.BF16, tt.Shape, tt.Data})
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for _, c := range []struct {
		name  string
		dtype quant.DType
		shape []int
	}{
		{"te.layers.0.mlp.gate_proj.weight", quant.Q8_2F, []int{96, 32}},
		{"te.embed_tokens.weight", quant.Q8Row, []int{64, 32}},
		{"dit.transformer_blocks.0.img_mlp.proj.weight", quant.Q4TP, []int{768, 256}},
		{"vae.decoder.conv_out.weight", quant.F16, []int{4, 12, 3, 3}},
		{"te.layers.0.input_layernorm.weight", quant.F32, []int{32}},
		{"vae.empty", quant.F32, []int{0}},
	} {
		n, ok := quant.PayloadSize(c.dtype, c.shape)
		if !ok {
			t.Fatalf("no payload size for %s%v", c.dtype, c.shape)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		s.tensors = append(s.tensors, sampleTensor{c.name, c.dtype, c.shape, b})
	}
	return s
}

// write streams the sample into path with AddTensor.
func (s *sample) write(t testing.TB, path string, opts Options) {
	t.Helper()
	w, err := Create(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetHeader(s.header); err != nil {
		t.Fatal(err)
	}
	for _, st := range s.tensors {
		if err := w.AddTensor(st.name, st.dtype, st.shape, st.payload); err != nil {
			w.Abort()
			t.Fatal(err)
		}
	}
	w.SetVocab(s.vocab)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
