package qi21

import (
	"context"
	"fmt"

	"easel/engine/ml"
)

// checkInputs verifies the host arrays against the layout.
func (m *Model) checkInputs(op string, lay *Layout, text []float32, latents []float32, latentRows int) error {
	c := m.Config
	if lay == nil {
		return fmt.Errorf("qi21.%s: no layout", op)
	}
	if text != nil && len(text) != lay.TextLen*c.ContextDim {
		return fmt.Errorf("qi21.%s: %d prompt values for %d rows of %d (the layout's L); the prompt embeddings and the image mask do not match", op, len(text), lay.TextLen, c.ContextDim)
	}
	if len(latents) != latentRows*c.InChannels {
		return fmt.Errorf("qi21.%s: %d latent values, the layout needs %d rows of %d", op, len(latents), latentRows, c.InChannels)
	}
	return nil
}

// Forward is the uncached transformer over the whole joint sequence at σ (spec §6.3–6.10):
// text is the prompt embeddings [L, context] (before txt_in), latents the condition latents then
// the target's [Latents, in]. The prefix rows are modulated at t = 0, the target rows at σ, and
// attention is block-causal. It returns [S, out]; the velocity is the last T rows. A cancelled
// ctx stops it at the next linear layer or attention.
func (m *Model) Forward(ctx context.Context, lay *Layout, text, latents []float32, sigma float32) ([]float32, error) {
	if err := m.checkInputs("Forward", lay, text, latents, lay.Latents); err != nil {
		return nil, err
	}
	e := ml.NewScope(ml.WithContext(m.be, ctx))
	vis, err := ml.BlockCausalVisibility(lay.ImageIDs)
	e.Do(err)
	p := &pass{
		x:    m.joint(e, lay, text, latents, 0, 0, lay.S),
		rows: lay.S,
		groups: []group{
			{0, lay.PrefixLen, m.modulationAt(e, 0)},
			{lay.PrefixLen, lay.T, m.modulationAt(e, sigma)},
		},
		rope:    m.ropeFor(e, lay.Positions),
		visible: vis,
		s:       newScratch(e, m.Config, lay.S),
	}
	m.run(e, p)
	out := m.output(e, p)
	if e.Err() != nil {
		return nil, fmt.Errorf("qi21.Forward: %w", e.Err())
	}
	return out, nil
}
