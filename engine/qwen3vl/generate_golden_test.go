package qwen3vl

import (
	"context"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/internal/generatecase"
	"easel/internal/golden"
)

// TestGoldenGeneration decodes every generate_* case on the CPU with the untied tiny text encoder
// converted at source precision: the greedy tokens, the tokens under repetition penalty 1.3 and
// every step's top-256 logits.
func TestGoldenGeneration(t *testing.T) {
	generatecase.Each(t, convert.ProfileF16, func(t *testing.T, c *golden.Case, model *cmf.File) generatecase.Run {
		enc, err := NewEncoder(cpu.New(), model)
		if err != nil {
			t.Fatal(err)
		}
		return caseRun(enc)
	})
}

// caseRun adapts an encoder to generatecase.Run.
func caseRun(enc *Encoder) generatecase.Run {
	return func(t *testing.T, in generatecase.Inputs, maxTokens int, penalty float64, onLogits func(int, []float32)) []int32 {
		t.Helper()
		var images []VisionInput
		if vc, ok := enc.VisionConfig(); ok {
			off := 0
			for _, g := range in.Grids {
				n := g[0] * g[1] * g[2] * vc.PatchValues()
				if off+n > len(in.Pixels) {
					t.Fatalf("pixel_values hold %d values; image %d needs up to %d", len(in.Pixels), len(images)+1, off+n)
				}
				images = append(images, VisionInput{Pixels: in.Pixels[off : off+n], Grid: g})
				off += n
			}
		}
		g, err := enc.Generate(context.Background(), in.IDs, images, GenerateOptions{
			MaxTokens: maxTokens, Sampling: Sampling{RepetitionPenalty: penalty}, OnLogits: onLogits,
		})
		if err != nil {
			t.Fatal(err)
		}
		return g.IDs
	}
}
