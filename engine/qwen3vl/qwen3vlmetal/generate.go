package qwen3vlmetal

import (
	"context"
	"fmt"

	"easel/engine/ml/metal"
	"easel/engine/qwen3vl"
)

// PlanGenerateFor is the device memory, beyond the weights, of writing maxTokens tokens after a
// prompt of tokens tokens with images: the prefill's activations (PlanEncodeFor), the key/value
// cache of every layer for all the tokens, and one row's logits.
func PlanGenerateFor(tc qwen3vl.TextConfig, vc *qwen3vl.VisionConfig, tokens, maxTokens int, grids [][3]int) int64 {
	return PlanEncodeFor(tc, vc, tokens, grids) + qwen3vl.KVCacheBytes(tc, tokens+maxTokens) + 4*int64(tc.Vocab+tc.Hidden)
}

// Generate is qwen3vl.Encoder.Generate on the device.
func (e *Encoder) Generate(ctx context.Context, ids []int32, images []qwen3vl.VisionInput, opts qwen3vl.GenerateOptions) (g *qwen3vl.Generation, err error) {
	var vc *qwen3vl.VisionConfig
	if c, ok := e.enc.VisionConfig(); ok {
		vc = &c
	}
	grids := make([][3]int, len(images))
	for i, img := range images {
		grids[i] = img.Grid
	}
	need := PlanGenerateFor(e.enc.TextConfig(), vc, len(ids), opts.MaxTokens, grids)
	err = e.Run(fmt.Sprintf("writing up to %d tokens after a prompt of %d", opts.MaxTokens, len(ids)), need, func() (err error) {
		g, err = e.enc.Generate(ctx, ids, images, opts)
		return err
	})
	return g, err
}

// Generate writes on the device or, when it declines before the first token, on the CPU.
func (r *Runner) Generate(ctx context.Context, ids []int32, images []qwen3vl.VisionInput, opts qwen3vl.GenerateOptions) (*qwen3vl.Generation, error) {
	var device func() (*qwen3vl.Generation, error)
	if r.gpu != nil {
		device = func() (*qwen3vl.Generation, error) {
			g, err := r.gpu.Generate(ctx, ids, images, opts)
			if err != nil {
				return nil, fmt.Errorf("the text encoder on %s: %w", r.gpu.DeviceName(), err)
			}
			return g, nil
		}
	}
	g, _, err := metal.Try(device, func() (*qwen3vl.Generation, error) { return r.cpu.Generate(ctx, ids, images, opts) }, r.onDecline)
	return g, err
}
