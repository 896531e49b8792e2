package qwen3vl

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/ml/cpu"
	"easel/internal/golden"
)

// parityTolerance is the end-to-end bound REFERENCE.md gives for a faithful float32 implementation.
const parityTolerance = 1e-4

// systemPrefixRows is drop_idx of spec §1.2 on the shipped tokenizer.
const systemPrefixRows = 14

func newTinyEncoder(t testing.TB) *Encoder {
	t.Helper()
	enc, err := NewEncoder(cpu.New(), openHFTextEncoder(t))
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

func loadCase(t *testing.T, path string) *golden.Case {
	t.Helper()
	c, err := golden.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func int32s(t *testing.T, c *golden.Case, name string) []int32 {
	t.Helper()
	v, _, err := c.Int64s(name)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func float32s(t *testing.T, c *golden.Case, name string) []float32 {
	t.Helper()
	v, _, err := c.Float32s(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// visionInputs splits a case's pixel_values by its image_grid_thw.
func visionInputs(t *testing.T, c *golden.Case, prefix string, patchValues int) []VisionInput {
	t.Helper()
	if !c.Has(prefix + "image_grid_thw") {
		return nil
	}
	grid, _, err := c.Int64s(prefix + "image_grid_thw")
	if err != nil {
		t.Fatal(err)
	}
	pixels := float32s(t, c, prefix+"pixel_values")
	var out []VisionInput
	off := 0
	for i := 0; i+3 <= len(grid); i += 3 {
		g := [3]int{int(grid[i]), int(grid[i+1]), int(grid[i+2])}
		n := g[0] * g[1] * g[2] * patchValues
		if off+n > len(pixels) {
			t.Fatalf("%s: pixel_values hold %d values, image %d needs up to %d", c.Name, len(pixels), i/3+1, off+n)
		}
		out = append(out, VisionInput{Pixels: pixels[off : off+n], Grid: g})
		off += n
	}
	if off != len(pixels) {
		t.Fatalf("%s: pixel_values hold %d values, the grids use %d", c.Name, len(pixels), off)
	}
	return out
}

func TestGoldenTextEncoderLastHiddenPrenorm(t *testing.T) {
	paths, err := golden.Cases("textenc")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no textenc_* cases in the golden directory")
	}
	enc := newTinyEncoder(t)
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".safetensors"), func(t *testing.T) {
			c := loadCase(t, p)
			got, err := enc.Encode(context.Background(), int32s(t, c, "input_ids"), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := float32s(t, c, "last_hidden_prenorm")
			if e := golden.RelErr(got, want); !(e <= parityTolerance) {
				t.Errorf("last hidden state (before the final norm): relative error %.3g, want ≤ %g", e, parityTolerance)
			} else {
				t.Logf("relative error %.3g over %d tokens", e, len(got)/enc.TextConfig().Hidden)
			}
		})
	}
}

// TestGoldenPromptEmbeddings feeds every pipeline case's text-encoder inputs (te0_*, and te1_* for
// the negative prompt when present) and compares the rows after the system prefix with the first
// denoiser call's encoder_hidden_states (the positive prompt's).
func TestGoldenPromptEmbeddings(t *testing.T) {
	paths, err := golden.Cases("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no pipeline_* cases in the golden directory")
	}
	enc := newTinyEncoder(t)
	vc, _ := enc.VisionConfig()
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".safetensors"), func(t *testing.T) {
			c := loadCase(t, p)
			ids := int32s(t, c, "te0_input_ids")
			if c.Has("te0_attention_mask") {
				// The pipeline keeps only attended rows (spec §1.5); Encode takes the unpadded prompt.
				mask := int32s(t, c, "te0_attention_mask")
				kept := ids[:0:0]
				for i, id := range ids {
					if mask[i] == 1 {
						kept = append(kept, id)
					}
				}
				ids = kept
			}
			hidden, err := enc.Encode(context.Background(), ids, visionInputs(t, c, "te0_", vc.PatchValues()))
			if err != nil {
				t.Fatal(err)
			}
			got, err := DropPrefixRows(hidden, enc.TextConfig().Hidden, systemPrefixRows)
			if err != nil {
				t.Fatal(err)
			}
			want := float32s(t, c, "dit0_encoder_hidden_states")
			if e := golden.RelErr(got, want); !(e <= parityTolerance) {
				t.Errorf("prompt embeddings: relative error %.3g, want ≤ %g", e, parityTolerance)
			} else {
				t.Logf("relative error %.3g", e)
			}
		})
	}
}
