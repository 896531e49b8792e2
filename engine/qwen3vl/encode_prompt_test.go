package qwen3vl

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/condimage"
	"easel/engine/imageio"
	"easel/internal/golden"
)

// TestGoldenPromptToEmbeddings runs the whole package as the pipeline will, from each pipeline
// case's prompt string and condition PNGs: condition-image preparation, the prompt template and
// tokenizer, the encoder, and the system-prefix drop, and compares the result with the prompt
// embeddings the reference's first denoiser call received.
func TestGoldenPromptToEmbeddings(t *testing.T) {
	tok, proc := snapshotTokenizer(t)
	paths, err := golden.Cases("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no pipeline_* cases in the golden directory")
	}
	enc := newTinyEncoder(t)
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".safetensors"), func(t *testing.T) {
			c := loadCase(t, p)
			prompt, ok := c.Meta["prompt"].(string)
			if !ok {
				t.Fatalf("case %s has no prompt in its metadata", c.Name)
			}
			var images []VisionInput
			var pads []int
			if names, _ := c.Meta["cond_images"].([]any); len(names) > 0 {
				res, ok := c.Meta["res"].(float64)
				if !ok {
					t.Fatalf("case %s has no numeric \"res\" in its metadata", c.Name)
				}
				for _, name := range names {
					file, err := golden.Path(name.(string))
					if err != nil {
						t.Fatal(err)
					}
					img, err := imageio.Load(file)
					if err != nil {
						t.Fatal(err)
					}
					ci, err := condimage.PrepareConditionImage(img, int(res), proc)
					if err != nil {
						t.Fatal(err)
					}
					n, err := ImagePadCount(ci.GridTHW, proc.MergeSize)
					if err != nil {
						t.Fatal(err)
					}
					images = append(images, VisionInput{Pixels: ci.PixelValues, Grid: ci.GridTHW})
					pads = append(pads, n)
				}
			}
			built, err := BuildPrompt(tok, prompt, pads)
			if err != nil {
				t.Fatal(err)
			}
			hidden, err := enc.Encode(context.Background(), built.IDs, images)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DropPrefixRows(hidden, enc.TextConfig().Hidden, built.Drop)
			if err != nil {
				t.Fatal(err)
			}
			want := float32s(t, c, "dit0_encoder_hidden_states")
			if e := golden.RelErr(got, want); !(e <= parityTolerance) {
				t.Errorf("prompt %q with %d condition images: relative error %.3g, want ≤ %g", prompt, len(images), e, parityTolerance)
			} else {
				t.Logf("prompt %q with %d condition images: relative error %.3g", prompt, len(images), e)
			}
		})
	}
}
