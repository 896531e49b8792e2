package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/imagefile"
	"easel/engine/convert"
	"easel/engine/lora/loratest"
	"easel/engine/qi21"
	"easel/engine/safetensors"
	"easel/internal/golden"
)

// writeRandomLoRA writes a random Comfy-format LoRA for the tiny snapshot's transformer and
// returns its path and the dense deltas it stands for at strength 1.
func writeRandomLoRA(t *testing.T, dir string) (string, map[string]loratest.Delta) {
	t.Helper()
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(snap, "transformer", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := qi21.ParseConfig(js)
	if err != nil {
		t.Fatal(err)
	}
	tensors, deltas := loratest.Random(qi21.LinearLayers(cfg), loratest.Comfy, 6, 0.08, 5)
	path := filepath.Join(dir, "style.safetensors")
	if err := safetensors.WriteFile(path, tensors, nil); err != nil {
		t.Fatal(err)
	}
	return path, deltas
}

// convertedCopy copies the tiny snapshot, letting edit rewrite any file (by its slash-separated
// relative path), and converts the copy with the f16 profile (which keeps f32 weights f32).
func convertedCopy(t *testing.T, edit func(rel string, b []byte) []byte) string {
	t.Helper()
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "snapshot")
	err = filepath.WalkDir(snap, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(snap, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), edit(filepath.ToSlash(rel), b), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "copy.cmf")
	if _, err := convert.Convert(context.Background(), dst, path, convert.Options{Profile: convert.ProfileF16}); err != nil {
		t.Fatal(err)
	}
	return path
}

// mergedCMF is the tiny model with the deltas merged into its transformer's weights (kept in
// f32).
func mergedCMF(t *testing.T, deltas map[string]loratest.Delta) string {
	t.Helper()
	return convertedCopy(t, func(rel string, b []byte) []byte {
		if rel != "transformer/diffusion_pytorch_model.safetensors" {
			return b
		}
		st, err := safetensors.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		var out []*safetensors.Tensor
		for _, name := range st.Names() {
			tt := st.Tensor(name)
			d, ok := deltas[strings.TrimSuffix(name, ".weight")]
			if !ok {
				out = append(out, tt)
				continue
			}
			w, err := tt.Float32s()
			if err != nil {
				t.Fatal(err)
			}
			for i := range w {
				w[i] += d.W[i]
			}
			out = append(out, safetensors.F32Tensor(name, tt.Shape, w))
		}
		merged, err := safetensors.Encode(out, st.Metadata)
		if err != nil {
			t.Fatal(err)
		}
		return merged
	})
}

func pngPixels(t *testing.T, path string) []uint8 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return nrgbaBytes(img)
}

// maxLevelDiff is the largest difference of two 8-bit images, in levels.
func maxLevelDiff(a, b []uint8) int {
	worst := 0
	for i := range a {
		worst = max(worst, int(a[i])-int(b[i]), int(b[i])-int(a[i]))
	}
	return worst
}

// TestGenerateLoRAEqualsMergedModel: `--lora L:1` on the tiny model gives the image (within 2
// levels of 8 bits) of a model file converted from a snapshot with the LoRA merged into its
// weights; the image records the LoRA, and --from restores it from beside the image.
func TestGenerateLoRAEqualsMergedModel(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	loraPath, deltas := writeRandomLoRA(t, dir)
	// Any request will do: the test compares two runs, not the reference.
	args := []string{"generate", "--prompt", "A capybara wearing a wizard hat, oil painting", "--size", "96x64", "--steps", "4", "--seed", "5"}
	withLoRA := filepath.Join(dir, "with-lora.png")
	if code, _, stderr := run(append(args, "--model", model, "--lora", loraPath+":1", "--out", withLoRA)...); code != ExitOK {
		t.Fatalf("--lora: exit %d: %s", code, stderr)
	}
	merged := filepath.Join(dir, "merged.png")
	if code, _, stderr := run(append(args, "--model", mergedCMF(t, deltas), "--out", merged)...); code != ExitOK {
		t.Fatalf("merged model: exit %d: %s", code, stderr)
	}
	plain := filepath.Join(dir, "plain.png")
	if code, _, stderr := run(append(args, "--model", model, "--out", plain)...); code != ExitOK {
		t.Fatalf("no LoRA: exit %d: %s", code, stderr)
	}
	got, want := pngPixels(t, withLoRA), pngPixels(t, merged)
	d, changed := maxLevelDiff(got, want), maxLevelDiff(pngPixels(t, plain), want)
	t.Logf("--lora vs merged model: at most %d levels apart (the LoRA moves pixels by up to %d)", d, changed)
	if d > 2 {
		t.Errorf("--lora and the merged model differ by %d levels of 8 bits", d)
	}
	if changed <= 2 {
		t.Fatalf("the LoRA changes the image by only %d levels: the test could not see it missing", changed)
	}

	m, err := imagefile.ReadFile(withLoRA)
	if err != nil {
		t.Fatal(err)
	}
	if l := m.Settings.LoRAs; len(l) != 1 || l[0].Name != "style.safetensors" || len(l[0].SHA256) != 64 || len(l[0].ShortHash) != 12 || l[0].Strength != 1 {
		t.Errorf("recorded LoRAs %+v", l)
	}
	if !strings.Contains(m.Parameters, "<lora:style:1>") || !strings.Contains(m.Parameters, `Lora hashes: "style: `) {
		t.Errorf("parameters %q lack the LoRA", m.Parameters)
	}
	again := filepath.Join(t.TempDir(), "again.png")
	if code, _, stderr := run("generate", "--model", model, "--from", withLoRA, "--out", again); code != ExitOK {
		t.Fatalf("--from: exit %d: %s", code, stderr)
	}
	if d := maxLevelDiff(pngPixels(t, again), got); d != 0 {
		t.Errorf("--from restored an image %d levels away: the LoRA was not restored", d)
	}
	os.Remove(loraPath)
	code, _, stderr := run("generate", "--model", model, "--from", withLoRA, "--out", again)
	if code != ExitLoRA || !strings.Contains(stderr, "style.safetensors") {
		t.Errorf("--from without the LoRA: exit %d, %q", code, stderr)
	}
}

// TestGenerateRefusesForeignLoRA: an SDXL LoRA, a LoRA of another size, and a missing file are
// refused before any work, with the counts or the tensor named.
func TestGenerateRefusesForeignLoRA(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	sdxl := filepath.Join(dir, "sdxl.safetensors")
	z := func(name string, shape ...int) *safetensors.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		return safetensors.F32Tensor(name, shape, make([]float32, n))
	}
	if err := safetensors.WriteFile(sdxl, []*safetensors.Tensor{
		z("lora_unet_down_blocks_1_attentions_0_transformer_blocks_0_attn1_to_q.lora_down.weight", 4, 640),
		z("lora_unet_down_blocks_1_attentions_0_transformer_blocks_0_attn1_to_q.lora_up.weight", 640, 4),
		z("lora_unet_down_blocks_1_attentions_0_transformer_blocks_0_attn1_to_q.alpha"),
	}, nil); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.safetensors")
	if err := safetensors.WriteFile(big, []*safetensors.Tensor{
		z("transformer.transformer_blocks.0.attn.to_q.lora_A.weight", 4, 4096), z("transformer.transformer_blocks.0.attn.to_q.lora_B.weight", 4096, 4),
	}, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ spec, want string }{
		{sdxl, "matched 0 of 3 tensors: this LoRA is for another model"},
		{big + ":0.5", "transformer.transformer_blocks.0.attn.to_q.lora_A.weight"},
		{filepath.Join(dir, "none.safetensors"), "none.safetensors"},
		{sdxl + ":1e9", "out of range"},
	} {
		code, _, stderr := run("generate", "--model", model, "--prompt", "x", "--size", "64x64", "--steps", "2", "--lora", c.spec, "--out", filepath.Join(dir, "x.png"))
		if code != ExitLoRA || !strings.Contains(stderr, c.want) {
			t.Errorf("--lora %s: exit %d, stderr %q; want %d mentioning %q", c.spec, code, stderr, ExitLoRA, c.want)
		}
	}
}

// TestInspectLoRA: `easel inspect L.safetensors --model M.cmf` lists the layers a LoRA adapts
// with their counts and scales; a foreign LoRA is refused with the counts.
func TestInspectLoRA(t *testing.T) {
	model := tinyCMF(t)
	dir := t.TempDir()
	path, _ := writeRandomLoRA(t, dir)
	code, out, stderr := run("inspect", "--model", model, path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"sha256", "tensors       ", "transformer_blocks.N.attn.to_q", "img_mlp.gate_layer", "img_in", "ranks"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Against the published geometry the tiny model's LoRA is the wrong size.
	if code, _, stderr := run("inspect", path); code == ExitOK || !strings.Contains(stderr, "another size") {
		t.Errorf("tiny LoRA against the published model: exit %d, %q", code, stderr)
	}
}

// TestBenchDiTCPULoRA: `easel bench dit-cpu --lora-rank` reports each rank's block against the
// block without it (the figures themselves go to docs/BENCHMARKS.md, never into a test).
func TestBenchDiTCPULoRA(t *testing.T) {
	code, out, stderr := run("bench", "dit-cpu", "--rows", "4", "--prefix", "2", "--reps", "1", "--codecs", "q8_2f", "--lora-rank", "2,3", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep ditCPUReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.LoRA) != 2 || rep.LoRA[0].Rank != 2 || rep.LoRA[1].Rank != 3 || !(rep.LoRA[0].Ratio > 0) || !(rep.LoRA[1].FlopsRatio > rep.LoRA[0].FlopsRatio) {
		t.Errorf("LoRA entries %+v", rep.LoRA)
	}
	if code, _, _ := run("bench", "dit-cpu", "--rows", "4", "--reps", "1", "--lora-rank", "x"); code != ExitUsage {
		t.Errorf("--lora-rank x: exit %d", code)
	}
}
