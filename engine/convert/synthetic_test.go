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

	"easel/engine/quant"
)

// A synthetic Qwen-Image-2.1 snapshot with the DiT at its real width (4096, 32 heads, SwiGLU
// 12288) and a few blocks of random bf16 weights in ~1 GB shards, for measuring convert
// throughput and memory on real tensor shapes. The text encoder, VAE, tokenizer and scheduler are
// the tiny snapshot's.
//
//	go test -c -o /tmp/convert.test ./engine/convert
//	EASEL_SYNTHETIC_SNAPSHOT=/tmp/synth /tmp/convert.test -test.run SyntheticSnapshot -test.v   # writes it (once) and converts
//	EASEL_SYNTHETIC_SNAPSHOT=/tmp/synth /usr/bin/time -v /tmp/convert.test -test.run SyntheticSnapshot -test.v
//
// EASEL_SYNTHETIC_BLOCKS sets the block count (default 5: 2.45 GB of bf16).

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
	for _, rel := range []string{"processor", "scheduler", "text_encoder", "vae"} {
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
}
