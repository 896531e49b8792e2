package qwen3vl

import (
	"context"
	"fmt"
	"math"

	"easel/engine/ml"
	"easel/engine/quant"
)

// languageModel runs Qwen3-VL's decoder layers (spec §10.3) on a backend.
type languageModel struct {
	b ml.Backend
	c TextConfig
	w *lmWeights
	// tap, when set, sees each layer's output (before DeepStack) as "lm.layers.{i}".
	tap func(stage string, t ml.Tensor)
}

// embed decodes the embedding rows of ids on the host, reading only those rows of the table.
func (m *languageModel) embed(ids []int32) ([]float32, error) {
	D := m.c.Hidden
	out := make([]float32, len(ids)*D)
	for i, id := range ids {
		if id < 0 || int(id) >= m.c.Vocab {
			return nil, fmt.Errorf("token %d at position %d is outside the vocabulary of %d: the tokenizer does not belong to this model", id, i, m.c.Vocab)
		}
		if err := quant.DequantizeRows(m.w.embed, int(id), int(id)+1, out[i*D:(i+1)*D]); err != nil {
			return nil, fmt.Errorf("token embedding: %w", err)
		}
	}
	return out, nil
}

// lmScratch holds one pass's activations.
type lmScratch struct {
	h, q, k, v, attn, gate, up ml.Tensor
}

// forward runs every decoder layer over x [n, hidden] in place. After layer l, inject(l) may add
// to x (DeepStack). The result is the residual stream before the final norm.
func (m *languageModel) forward(ctx context.Context, x ml.Tensor, n int, rope *ml.Rope, inject func(layer int) error) (err error) {
	b, c := m.b, m.c
	var temps []ml.Tensor
	defer func() {
		for _, t := range temps {
			b.Free(t)
		}
	}()
	alloc := func(shape ...int) ml.Tensor {
		if err != nil {
			return nil
		}
		var t ml.Tensor
		if t, err = b.New(shape...); err == nil {
			temps = append(temps, t)
		}
		return t
	}
	qw, kvw := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	s := &lmScratch{
		h: alloc(n, c.Hidden), q: alloc(n, qw), k: alloc(n, kvw), v: alloc(n, kvw), attn: alloc(n, qw),
		gate: alloc(n, c.Intermediate), up: alloc(n, c.Intermediate),
	}
	if err != nil {
		return fmt.Errorf("language model over %d tokens: %w", n, err)
	}
	spec := ml.AttnSpec{
		Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
		Scale: float32(1 / math.Sqrt(float64(c.HeadDim))), Visible: ml.CausalVisibility(0, n),
	}
	for l := range m.w.layers {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := m.layer(&m.w.layers[l], x, s, rope, spec); err != nil {
			return fmt.Errorf("language model layer %d: %w", l, err)
		}
		if m.tap != nil {
			m.tap(fmt.Sprintf("lm.layers.%d", l), x)
		}
		if inject != nil {
			if err := inject(l); err != nil {
				return fmt.Errorf("language model layer %d: DeepStack: %w", l, err)
			}
		}
	}
	return nil
}

// layer is one decoder layer: x += o(attn(rope(norm(q)), rope(norm(k)), v)) over RMSNorm(x), then
// x += down(SiLU(gate)·up) over RMSNorm(x).
func (m *languageModel) layer(w *lmLayer, x ml.Tensor, s *lmScratch, rope *ml.Rope, spec ml.AttnSpec) error {
	b, c := m.b, m.c
	if err := b.RMSNorm(s.h, x, w.inputNorm, c.RMSNormEps, false); err != nil {
		return err
	}
	if err := b.LinearBatch([]ml.Tensor{s.q, s.k, s.v}, s.h, []*quant.Tensor{w.q, w.k, w.v}); err != nil {
		return err
	}
	if err := b.HeadNormRoPE(s.q, c.Heads, c.HeadDim, w.qNorm, c.RMSNormEps, rope); err != nil {
		return err
	}
	if err := b.HeadNormRoPE(s.k, c.KVHeads, c.HeadDim, w.kNorm, c.RMSNormEps, rope); err != nil {
		return err
	}
	if err := b.Attention(s.attn, s.q, s.k, s.v, nil, nil, spec); err != nil {
		return err
	}
	if err := b.Linear(s.h, s.attn, w.o); err != nil {
		return err
	}
	if err := b.Add(x, x, s.h); err != nil {
		return err
	}
	if err := b.RMSNorm(s.h, x, w.postNorm, c.RMSNormEps, false); err != nil {
		return err
	}
	if err := b.LinearBatch([]ml.Tensor{s.gate, s.up}, s.h, []*quant.Tensor{w.gate, w.up}); err != nil {
		return err
	}
	if err := b.SwiGLU(s.gate, s.gate, s.up); err != nil {
		return err
	}
	if err := b.Linear(s.h, s.gate, w.down); err != nil {
		return err
	}
	return b.Add(x, x, s.h)
}
