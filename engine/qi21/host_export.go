package qi21

import (
	"context"
	"fmt"

	"easel/engine/ml"
)

// The host work of the denoiser, exported for backends that run the blocks themselves (the Metal
// denoiser): the same ops in the same order as Prefill and Step run them, on the model's backend,
// with the results copied to the host. One implementation, so a device path cannot drift from
// the CPU path's embedding, modulation or RoPE.

// PrefixRows is the joint sequence's prefix [PrefixLen, D] as the first block sees it: txt_in
// over the prompt's text rows (text [L, context]) and img_in over the condition latents
// (condLatents [CondLatents, in]), placed run by run. A cancelled ctx stops it at the next
// linear layer.
func (m *Model) PrefixRows(ctx context.Context, lay *Layout, text, condLatents []float32) ([]float32, error) {
	if err := m.checkInputs("PrefixRows", lay, text, condLatents, lay.CondLatents()); err != nil {
		return nil, err
	}
	if text == nil {
		return nil, fmt.Errorf("qi21.PrefixRows: no prompt embeddings")
	}
	if lay.PrefixLen == 0 {
		return nil, nil
	}
	e := ml.NewScope(ml.WithContext(m.be, ctx))
	x := m.joint(e, lay, text, condLatents, 0, 0, lay.PrefixLen)
	out := e.Download(x)
	e.B.Free(x)
	if e.Err() != nil {
		return nil, fmt.Errorf("qi21.PrefixRows: %w", e.Err())
	}
	return out, nil
}

// Modulation is the shared modulation of one timestep t (σ; 0 for the prefix): the four
// per-block vectors [scale1 | gate1 | scale2 | gate2] (4D values) and 1 + the final norm's
// scale (D values), the form a fused final-norm kernel reads.
func (m *Model) Modulation(ctx context.Context, t float32) (mods, finalScale []float32, err error) {
	e := ml.NewScope(ml.WithContext(m.be, ctx))
	md := m.modulationAt(e, t)
	mods, finalScale = e.Download(md.all), e.Download(md.final)
	e.B.Free(md.all)
	e.B.Free(md.final)
	if e.Err() != nil {
		return nil, nil, fmt.Errorf("qi21.Modulation at t=%v: %w", t, e.Err())
	}
	for i := range finalScale {
		finalScale[i]++
	}
	return mods, finalScale, nil
}

// RopeTables are the cos and sin tables [rows, HeadDim/2] of the given joint rows' 3-axis
// positions (Layout.Positions), interleaved pairs, as Prefill and Step upload them.
func (m *Model) RopeTables(positions [][]int) (cos, sin []float32, err error) {
	cos, sin, err = ml.RopeTable(positions, m.Config.AxesDims, ropeTheta)
	if err != nil {
		return nil, nil, fmt.Errorf("qi21.RopeTables: %w", err)
	}
	return cos, sin, nil
}

// TimestepEmbedding is the 256-channel sinusoidal embedding of t (σ scale) the modulation
// starts from: diffusers' Timesteps(256, flip_sin_to_cos, shift 0, scale 1000) in float32.
func TimestepEmbedding(t float32) []float32 { return timestepEmbedding(t) }
