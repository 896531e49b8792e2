package qwen3vl

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"easel/engine/ml/cpu"
	"easel/engine/quant"
)

// memorySource is a quant.Source over tensors held in memory.
type memorySource map[string]*quant.Tensor

func (s memorySource) Tensor(name string) (*quant.Tensor, error) {
	if t, ok := s[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("no tensor %q", name)
}

// randomTensor encodes Gaussian weights (σ = 0.02) of the given shape in codec d.
func randomTensor(tb testing.TB, r *rand.Rand, name string, d quant.DType, shape ...int) *quant.Tensor {
	tb.Helper()
	n := 1
	for _, s := range shape {
		n *= s
	}
	w := make([]float32, n)
	for i := range w {
		w[i] = float32(r.NormFloat64() * 0.02)
	}
	if len(shape) == 1 {
		for i := range w {
			w[i] += 1 // norm weights sit around one
		}
	}
	data, err := quant.Encode(d, shape, w)
	if err != nil {
		tb.Fatal(err)
	}
	return &quant.Tensor{Name: name, DType: d, Shape: shape, Data: data}
}

// realGeometryLayer is one Qwen3-VL-8B decoder layer (hidden 4096, 32 heads / 8 key-value heads of
// 128, MLP 12288) with random weights in the default profile's codecs: q8_2f projections, f32
// norms, a q8_row embedding (with a small vocabulary: only the embedded rows are ever read).
func realGeometryLayer(tb testing.TB) memorySource {
	const D, H, KV, hd, I, vocab = 4096, 32, 8, 128, 12288, 1024
	cfg, _ := json.Marshal(map[string]any{
		"hidden_size": D, "num_hidden_layers": 1, "num_attention_heads": H, "num_key_value_heads": KV,
		"head_dim": hd, "intermediate_size": I, "vocab_size": vocab, "rms_norm_eps": 1e-6,
		"rope_parameters": map[string]any{"rope_theta": 5e6, "mrope_section": []int{24, 20, 20}},
	})
	r := rand.New(rand.NewPCG(7, 7))
	src := memorySource{"te.config_json": {Name: "te.config_json", DType: quant.U8, Shape: []int{len(cfg)}, Data: cfg}}
	add := func(name string, d quant.DType, shape ...int) { src[name] = randomTensor(tb, r, name, d, shape...) }
	add("te.embed_tokens.weight", quant.Q8Row, vocab, D)
	p := "te.layers.0."
	add(p+"input_layernorm.weight", quant.F32, D)
	add(p+"post_attention_layernorm.weight", quant.F32, D)
	add(p+"self_attn.q_norm.weight", quant.F32, hd)
	add(p+"self_attn.k_norm.weight", quant.F32, hd)
	add(p+"self_attn.q_proj.weight", quant.Q8_2F, H*hd, D)
	add(p+"self_attn.k_proj.weight", quant.Q8_2F, KV*hd, D)
	add(p+"self_attn.v_proj.weight", quant.Q8_2F, KV*hd, D)
	add(p+"self_attn.o_proj.weight", quant.Q8_2F, D, H*hd)
	add(p+"mlp.gate_proj.weight", quant.Q8_2F, I, D)
	add(p+"mlp.up_proj.weight", quant.Q8_2F, I, D)
	add(p+"mlp.down_proj.weight", quant.Q8_2F, D, I)
	return src
}

// BenchmarkRealGeometryLayer times one Qwen3-VL-8B language-model layer over a 512-token prompt on
// the CPU backend (plus the embedding lookup, which is negligible). The full encoder runs 36.
func BenchmarkRealGeometryLayer(b *testing.B) {
	const tokens = 512
	be := cpu.New()
	enc, err := NewEncoder(be, realGeometryLayer(b))
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]int32, tokens)
	for i := range ids {
		ids[i] = int32(i * 7 % 1024)
	}
	be.Timings().Reset()
	for b.Loop() {
		if _, err := enc.Encode(context.Background(), ids, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/tokens, "ms/token")
	b.Logf("%s, per class over %d runs: %v", be.Name(), b.N, be.Timings())
}

// realGeometryVisionBlock is one Qwen3-VL-8B vision block (hidden 1152, 16 heads of 72, MLP 4304)
// with the patch embedding, position table and final merger, random weights in the default
// profile's codecs (q8_2f matrices, bf16 patch embedding, f32 vectors).
func realGeometryVisionBlock(tb testing.TB) (VisionConfig, memorySource) {
	c := VisionConfig{Depth: 1, Hidden: 1152, Heads: 16, Intermediate: 4304, OutHidden: 4096, PatchSize: 16,
		TemporalPatch: 2, MergeSize: 2, InChannels: 3, PositionEmbeddings: 2304, RopeTheta: 10000, GELUTanh: true}
	r := rand.New(rand.NewPCG(9, 9))
	src := memorySource{}
	add := func(name string, d quant.DType, shape ...int) { src[name] = randomTensor(tb, r, name, d, shape...) }
	C, M := c.Hidden, 4*c.Hidden
	add("vis.patch_embed.weight", quant.BF16, C, c.PatchValues())
	add("vis.patch_embed.bias", quant.F32, C)
	add("vis.pos_embed.weight", quant.F32, c.PositionEmbeddings, C)
	p := "vis.blocks.0."
	for _, n := range []string{"norm1", "norm2"} {
		add(p+n+".weight", quant.F32, C)
		add(p+n+".bias", quant.F32, C)
	}
	for _, l := range []struct {
		name    string
		out, in int
	}{{"attn.qkv", 3 * C, C}, {"attn.proj", C, C}, {"mlp.linear_fc1", c.Intermediate, C}, {"mlp.linear_fc2", C, c.Intermediate}} {
		add(p+l.name+".weight", quant.Q8_2F, l.out, l.in)
		add(p+l.name+".bias", quant.F32, l.out)
	}
	add("vis.merger.norm.weight", quant.F32, C)
	add("vis.merger.norm.bias", quant.F32, C)
	add("vis.merger.linear_fc1.weight", quant.Q8_2F, M, M)
	add("vis.merger.linear_fc1.bias", quant.F32, M)
	add("vis.merger.linear_fc2.weight", quant.Q8_2F, c.OutHidden, M)
	add("vis.merger.linear_fc2.bias", quant.F32, c.OutHidden)
	return c, src
}

// BenchmarkRealGeometryVisionBlock times one vision block (plus the patch embedding and merger)
// over a 1024×1024 condition image: 64×64 = 4096 patches. The full tower runs 27 blocks.
func BenchmarkRealGeometryVisionBlock(b *testing.B) {
	be := cpu.New()
	c, src := realGeometryVisionBlock(b)
	w, err := bindVision(src, be, c)
	if err != nil {
		b.Fatal(err)
	}
	tower := &visionTower{b: be, c: c, w: w}
	r := rand.New(rand.NewPCG(3, 3))
	img := VisionInput{Pixels: make([]float32, 64*64*c.PatchValues()), Grid: [3]int{1, 64, 64}}
	for i := range img.Pixels {
		img.Pixels[i] = float32(r.Float64()*2 - 1)
	}
	be.Timings().Reset()
	for b.Loop() {
		out, err := tower.encode(context.Background(), []VisionInput{img})
		if err != nil {
			b.Fatal(err)
		}
		out.free(be)
	}
	b.Logf("%s, per class over %d runs: %v", be.Name(), b.N, be.Timings())
}
