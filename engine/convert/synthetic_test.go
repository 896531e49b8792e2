package convert

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"easel/engine/cmf"
	"easel/engine/quant"
	"easel/engine/safetensors"
)

// A synthetic Qwen-Image-2.1 snapshot at real tensor shapes, random bf16 weights, for measuring
// convert throughput and memory: the DiT at its real width (4096, 32 heads, SwiGLU 12288) with a
// few blocks in ~1 GB shards, and a one-layer Qwen3-VL-8B text encoder with the real 151936 × 4096
// token embedding (the largest tensor of the real snapshot). The VAE, vision tower, tokenizer and
// scheduler are the tiny snapshot's.
//
//	go test -c -o /tmp/convert.test ./engine/convert
//	EASEL_SYNTHETIC_VERIFY=1 EASEL_SYNTHETIC_SNAPSHOT=/tmp/synth /tmp/convert.test -test.run SyntheticSnapshot -test.v
//	EASEL_SYNTHETIC_SNAPSHOT=/tmp/synth /usr/bin/time -v /tmp/convert.test -test.run SyntheticSnapshot -test.v
//
// EASEL_SYNTHETIC_VERIFY=1 also verifies the file and checks a projection and the embedding
// against the source (not while measuring memory: it maps and decodes gigabytes).
// EASEL_SYNTHETIC_PROFILE picks the profile (default cortiq).
// EASEL_SYNTHETIC_BLOCKS sets the DiT block count (default 5: 2.47 GB of bf16; with the text
// encoder's 1.63 GB, 4.1 GB in all).

type syntheticTensor struct {
	name  string
	shape []int
}

func syntheticDiT(blocks int) []syntheticTensor {
	const dim, mlp = 4096, 12288
	ts := []syntheticTensor{
		{"img_in.weight", []int{dim, 64}},
		{"modulation.1.weight", []int{4 * dim, dim}},
		{"norm_out.linear.weight", []int{dim, dim}},
		{"proj_out.weight", []int{64, dim}},
		{"time_text_embed.timestep_embedder.linear_1.weight", []int{dim, 256}},
		{"time_text_embed.timestep_embedder.linear_2.weight", []int{dim, dim}},
		{"txt_in.in_layer.weight", []int{dim, dim}},
		{"txt_in.out_layer.weight", []int{dim, dim}},
		{"txt_in.text_norm.weight", []int{dim}},
	}
	for l := range blocks {
		p := "transformer_blocks." + strconv.Itoa(l) + "."
		ts = append(ts,
			syntheticTensor{p + "attn.norm_k.weight", []int{128}},
			syntheticTensor{p + "attn.norm_q.weight", []int{128}},
			syntheticTensor{p + "attn.to_k.weight", []int{dim, dim}},
			syntheticTensor{p + "attn.to_out.0.weight", []int{dim, dim}},
			syntheticTensor{p + "attn.to_q.weight", []int{dim, dim}},
			syntheticTensor{p + "attn.to_v.weight", []int{dim, dim}},
			syntheticTensor{p + "img_mlp.gate_layer.weight", []int{mlp, dim}},
			syntheticTensor{p + "img_mlp.out.weight", []int{dim, mlp}},
			syntheticTensor{p + "img_mlp.proj.weight", []int{mlp, dim}},
		)
	}
	return ts
}

// syntheticTextEncoder is Qwen3-VL-8B's language model cut to one layer, plus the tiny vision tower
// and final norm taken from the tiny snapshot by the caller.
func syntheticTextEncoder() []syntheticTensor {
	const dim, mlp, kv = 4096, 12288, 1024
	p := "model.language_model."
	return []syntheticTensor{
		{p + "embed_tokens.weight", []int{151936, dim}},
		{p + "layers.0.input_layernorm.weight", []int{dim}},
		{p + "layers.0.mlp.down_proj.weight", []int{dim, mlp}},
		{p + "layers.0.mlp.gate_proj.weight", []int{mlp, dim}},
		{p + "layers.0.mlp.up_proj.weight", []int{mlp, dim}},
		{p + "layers.0.post_attention_layernorm.weight", []int{dim}},
		{p + "layers.0.self_attn.k_norm.weight", []int{128}},
		{p + "layers.0.self_attn.k_proj.weight", []int{kv, dim}},
		{p + "layers.0.self_attn.o_proj.weight", []int{dim, dim}},
		{p + "layers.0.self_attn.q_norm.weight", []int{128}},
		{p + "layers.0.self_attn.q_proj.weight", []int{dim, dim}},
		{p + "layers.0.self_attn.v_proj.weight", []int{kv, dim}},
		{p + "norm.weight", []int{dim}},
	}
}

const syntheticTextConfig = `{"model_type": "qwen3_vl", "text_config": {"head_dim": 128, "hidden_size": 4096,
  "intermediate_size": 12288, "max_position_embeddings": 262144, "num_attention_heads": 32, "num_hidden_layers": 1,
  "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_theta": 5000000.0, "vocab_size": 151936},
  "vision_config": {"depth": 2, "hidden_size": 64}}`

func elements(shape []int) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	return n
}

// writeSyntheticShard streams random bf16 tensors (σ ≈ 0.02) into a safetensors file.
func writeSyntheticShard(path string, ts []syntheticTensor, rng *rand.Rand) error {
	header := map[string]any{}
	var off int64
	for _, t := range ts {
		n := 2 * elements(t.shape)
		header[t.name] = map[string]any{"dtype": "BF16", "shape": t.shape, "data_offsets": []int64{off, off + n}}
		off += n
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 8<<20)
	binary.Write(w, binary.LittleEndian, uint64(len(h)))
	w.Write(h)
	var buf [2]byte
	for _, t := range ts {
		for range elements(t.shape) {
			v := (rng.Float32() + rng.Float32() + rng.Float32() - 1.5) * 0.04 // roughly Gaussian
			binary.LittleEndian.PutUint16(buf[:], quant.Float32ToBFloat16(v))
			w.Write(buf[:])
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeSyntheticSnapshot writes the snapshot into dir unless it is already there.
func writeSyntheticSnapshot(t *testing.T, dir string, blocks int) {
	if _, err := os.Stat(filepath.Join(dir, "model_index.json")); err == nil {
		return
	}
	tiny := tinySnapshot(t)
	os.MkdirAll(filepath.Join(dir, "transformer"), 0o755)
	for _, rel := range []string{"processor", "scheduler", "vae"} {
		abs, _ := filepath.Abs(filepath.Join(tiny, rel))
		if err := os.Symlink(abs, filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf(`{"_class_name": "QwenImage21Transformer2DModel", "attention_head_dim": 128, "axes_dims_rope": [16, 56, 56],
  "causal_condition": true, "context_in_dim": 4096, "eps": 1e-06, "in_channels": 64, "mlp_ratio": 3,
  "num_attention_heads": 32, "num_layers": %d, "out_channels": 64, "patch_size": 1}`, blocks)
	os.WriteFile(filepath.Join(dir, "transformer", "config.json"), []byte(cfg), 0o644)

	// Shards of about 1 GB, in tensor order.
	var shards [][]syntheticTensor
	var size int64
	for _, st := range syntheticDiT(blocks) {
		if len(shards) == 0 || size > 1e9 {
			shards = append(shards, nil)
			size = 0
		}
		shards[len(shards)-1] = append(shards[len(shards)-1], st)
		size += 2 * elements(st.shape)
	}
	weightMap := map[string]string{}
	rng := rand.New(rand.NewPCG(21, 2026))
	for i, ts := range shards {
		name := fmt.Sprintf("diffusion_pytorch_model-%05d-of-%05d.safetensors", i+1, len(shards))
		if err := writeSyntheticShard(filepath.Join(dir, "transformer", name), ts, rng); err != nil {
			t.Fatal(err)
		}
		for _, st := range ts {
			weightMap[st.name] = name
		}
	}
	index, _ := json.Marshal(map[string]any{"metadata": map[string]any{}, "weight_map": weightMap})
	os.WriteFile(filepath.Join(dir, "transformer", "diffusion_pytorch_model.safetensors.index.json"), index, 0o644)

	os.MkdirAll(filepath.Join(dir, "text_encoder"), 0o755)
	os.WriteFile(filepath.Join(dir, "text_encoder", "config.json"), []byte(syntheticTextConfig), 0o644)
	if err := writeSyntheticShard(filepath.Join(dir, "text_encoder", "model.safetensors"), syntheticTextEncoder(), rng); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "model_index.json"), []byte(`{"_class_name": "QwenImage21Pipeline"}`), 0o644)
}

func TestConvertSyntheticSnapshot(t *testing.T) {
	dir := os.Getenv("EASEL_SYNTHETIC_SNAPSHOT")
	if dir == "" {
		t.Skip("set EASEL_SYNTHETIC_SNAPSHOT to a folder to write (once) and convert the ≥ 2 GB synthetic snapshot")
	}
	blocks := 5
	if b, err := strconv.Atoi(os.Getenv("EASEL_SYNTHETIC_BLOCKS")); err == nil {
		blocks = b
	}
	writeSyntheticSnapshot(t, dir, blocks)
	profile := ProfileCortiq
	if p := os.Getenv("EASEL_SYNTHETIC_PROFILE"); p != "" {
		profile = Profile(p)
	}
	out := dir + "-" + string(profile) + ".cmf"
	defer os.Remove(out)
	start := time.Now()
	res, err := Convert(context.Background(), dir, out, Options{Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	secs := time.Since(start).Seconds()
	t.Logf("profile %s: %d tensors, %.3f GB of source weights → %.3f GB file in %.1f s: %.0f MB/s of source",
		profile, res.Tensors, float64(res.SourceBytes)/1e9, float64(res.FileBytes)/1e9, secs, float64(res.SourceBytes)/1e6/secs)
	for d, n := range res.BytesByDType {
		t.Logf("  %v: %.3f GB", d, float64(n)/1e9)
	}
	if res.SourceBytes < 2e9 {
		t.Errorf("the synthetic snapshot holds only %.2f GB of weights", float64(res.SourceBytes)/1e9)
	}

	// The file is sound, and a real-size projection and the embedding read back within budget.
	// This maps and decodes gigabytes, so it is left out when measuring the conversion's memory.
	if os.Getenv("EASEL_SYNTHETIC_VERIFY") == "" {
		return
	}
	f, err := cmf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Verify(nil); err != nil {
		t.Fatal(err)
	}
	st, err := safetensors.Open(filepath.Join(dir, "transformer", "diffusion_pytorch_model-00001-of-00003.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	te, err := safetensors.Open(filepath.Join(dir, "text_encoder", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer te.Close()
	for name, src := range map[string]*safetensors.Tensor{
		"dit.transformer_blocks.0.attn.to_q.weight": st.Tensor("transformer_blocks.0.attn.to_q.weight"),
		"te.embed_tokens.weight":                    te.Tensor("model.language_model.embed_tokens.weight"),
	} {
		got, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := src.Float32s()
		dec, err := quant.Dequantize(got)
		if err != nil {
			t.Fatal(err)
		}
		budget, lossy := quantBudget[got.DType]
		if e := relRMS(want, dec); (lossy && e > budget) || (!lossy && e != 0) {
			t.Errorf("%s as %v: relative RMS error %.4f", name, got.DType, e)
		}
	}
}
