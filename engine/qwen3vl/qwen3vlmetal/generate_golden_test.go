package qwen3vlmetal

import (
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/ml/metal"
	"easel/engine/qwen3vl"
	"easel/internal/generatecase"
	"easel/internal/golden"
	"easel/kernels/device"
)

// TestEmuGoldenGeneration is engine/qwen3vl's TestGoldenGeneration on the emulated device: every
// generate_* case decoded by the float one-row kernels (the condition image's tower on the CPU),
// the greedy tokens and those under repetition penalty exactly, every step's top-256 logits
// within generatecase.Tolerance of the step's largest |logit|. A decline fails the test (it
// would have written on the CPU).
func TestEmuGoldenGeneration(t *testing.T) {
	generatecase.Each(t, convert.ProfileF16, func(t *testing.T, c *golden.Case, model *cmf.File) generatecase.Run {
		cpuEnc, err := qwen3vl.NewEncoder(cpu.New(), model)
		if err != nil {
			t.Fatal(err)
		}
		gpu, err := New(emuDevice(t, device.Limits{}), model, model.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(gpu.Close)
		if _, err := NewRunner(gpu, cpuEnc, func(d *metal.Declined) { t.Errorf("the device declined: %v", d) }); err != nil {
			t.Fatal(err)
		}
		return func(t *testing.T, in generatecase.Inputs, maxTokens int, penalty float64, onLogits func(int, []float32)) []int32 {
			t.Helper()
			var images []qwen3vl.VisionInput
			if vc, ok := cpuEnc.VisionConfig(); ok {
				off := 0
				for _, g := range in.Grids {
					n := g[0] * g[1] * g[2] * vc.PatchValues()
					if off+n > len(in.Pixels) {
						t.Fatalf("pixel_values hold %d values; image %d needs up to %d", len(in.Pixels), len(images)+1, off+n)
					}
					images = append(images, qwen3vl.VisionInput{Pixels: in.Pixels[off : off+n], Grid: g})
					off += n
				}
			}
			g, err := gpu.Generate(t.Context(), in.IDs, images, qwen3vl.GenerateOptions{
				MaxTokens: maxTokens, Sampling: qwen3vl.Sampling{RepetitionPenalty: penalty}, OnLogits: onLogits,
			})
			if err != nil {
				t.Fatal(err)
			}
			return g.IDs
		}
	})
}
