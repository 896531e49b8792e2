package qwen3vlmetal

import (
	"context"
	"fmt"

	"easel/engine/ml/metal"
	"easel/engine/qwen3vl"
)

// PlanGenerateFor is the device memory, beyond the weights, of writing maxTokens tokens after a
// prompt of tokens tokens: the one-row decoder's key/value cache of every layer for all the
// tokens, its scratch rows, the logits and the attention scores (RowDecodeBytes adds the copied
// weights). Condition images cost the device nothing here: Generate runs the vision tower on the
// host encoder, so vc and grids are not counted.
func PlanGenerateFor(tc qwen3vl.TextConfig, vc *qwen3vl.VisionConfig, tokens, maxTokens int, grids [][3]int) int64 {
	capacity := tokens + maxTokens
	qw := tc.Heads * tc.HeadDim
	scratch := 2*tc.Hidden + 2*qw + 2*tc.Intermediate + tc.Vocab + tc.HeadDim + tc.Heads*capacity
	return qwen3vl.KVCacheBytes(tc, capacity) + 4*int64(scratch)
}

// Generate is qwen3vl.Encoder.Generate on the device through the float one-row decode kernels
// (kernels/decode.metal): the weights are copied into the device as stored for the call, every
// prompt row and every new token runs through them, and the host samples. The prompt's rows
// (token embeddings, condition images through the vision tower, mRoPE tables) are prepared by
// the host encoder NewRunner pairs it with, so the vision tower runs on the CPU; without one, by
// the device encoder itself. A *metal.Declined error (a codec the kernels do not read, too little
// memory) comes before the first token.
func (e *Encoder) Generate(ctx context.Context, ids []int32, images []qwen3vl.VisionInput, opts qwen3vl.GenerateOptions) (g *qwen3vl.Generation, err error) {
	prep := e.host
	if prep == nil {
		prep = e.enc
	}
	w, err := prep.RowWeights()
	if err != nil {
		return nil, err
	}
	dec, err := newRowDecoder(e.Backend().Device(), w, len(ids)+max(opts.MaxTokens, 0), e.ResidentBytes())
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	if e.host != nil {
		return e.host.GenerateRows(ctx, ids, images, opts, dec)
	}
	err = e.Run(fmt.Sprintf("preparing a prompt of %d tokens", len(ids)), e.PlanEncode(0, images), func() (err error) {
		g, err = e.enc.GenerateRows(ctx, ids, images, opts, dec)
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
