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
func (m *languageModel) forward(ctx context.Context, x ml.Tensor, n int, rope *ml.Rope, inject func(layer int) error) error {
	return m.forwardCached(ctx, x, n, rope, inject, nil)
}

// forwardCached is forward with a key/value cache: when cache is not nil, x holds the n tokens
// after the cache's cache.n rows, each layer's keys and values are appended to the cache and the
// queries attend to every cached row before them (the cache's length grows by n).
func (m *languageModel) forwardCached(ctx context.Context, x ml.Tensor, n int, rope *ml.Rope, inject func(layer int) error, cache *kvCache) error {
	c := m.c
	e := ml.NewScope(m.b)
	defer e.Release()
	qw, kvw := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	s := &lmScratch{
		h: e.Temp(n, c.Hidden), q: e.Temp(n, qw), k: e.Temp(n, kvw), v: e.Temp(n, kvw), attn: e.Temp(n, qw),
		gate: e.Temp(n, c.Intermediate), up: e.Temp(n, c.Intermediate),
	}
	if err := e.Err(); err != nil {
		return fmt.Errorf("language model over %d tokens: %w", n, err)
	}
	start := 0
	if cache != nil {
		start = cache.n
		if start+n > cache.capacity {
			return fmt.Errorf("language model: %d cached tokens and %d new ones exceed the cache's %d rows", start, n, cache.capacity)
		}
	}
	spec := ml.AttnSpec{
		Heads: c.Heads, KVHeads: c.KVHeads, HeadDim: c.HeadDim,
		Scale: float32(1 / math.Sqrt(float64(c.HeadDim))), Visible: ml.CausalVisibility(start, n),
	}
	for l := range m.w.layers {
		if err := ctx.Err(); err != nil {
			return err
		}
		m.layer(e, &m.w.layers[l], x, s, rope, spec, cache.layer(e, l, start, n))
		if err := e.Err(); err != nil {
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
	if cache != nil {
		cache.n += n
	}
	return nil
}

// layer is one decoder layer (spec §10.3):
//
//	x += o(attn(rope(norm(q)), rope(norm(k)), v)) over RMSNorm(x)
//	x += down(SiLU(gate)·up) over RMSNorm(x)
//
// With a cache view kv, the rotated keys and the values go into the cache's new rows and the
// attention reads keys and values from all of its rows so far.
func (m *languageModel) layer(e *ml.Scope, w *lmLayer, x ml.Tensor, s *lmScratch, rope *ml.Rope, spec ml.AttnSpec, kv *layerView) {
	b, c := e.B, m.c
	e.Do(b.RMSNorm(s.h, x, w.InputNorm, c.RMSNormEps, false))
	e.Do(b.LinearBatch([]ml.Tensor{s.q, s.k, s.v}, s.h, []*quant.Tensor{w.Q, w.K, w.V}))
	e.Do(b.HeadNormRoPE(s.q, c.Heads, c.HeadDim, w.QNorm, c.RMSNormEps, rope))
	e.Do(b.HeadNormRoPE(s.k, c.KVHeads, c.HeadDim, w.KNorm, c.RMSNormEps, rope))
	if kv != nil {
		e.Do(b.Copy(kv.newK, s.k))
		e.Do(b.Copy(kv.newV, s.v))
		e.Do(b.Attention(s.attn, s.q, kv.allK, kv.allV, nil, nil, spec))
	} else {
		e.Do(b.Attention(s.attn, s.q, s.k, s.v, nil, nil, spec))
	}
	e.Do(b.Linear(s.h, s.attn, w.O))
	e.Do(b.Add(x, x, s.h))
	e.Do(b.RMSNorm(s.h, x, w.PostNorm, c.RMSNormEps, false))
	e.Do(b.LinearBatch([]ml.Tensor{s.gate, s.up}, s.h, []*quant.Tensor{w.Gate, w.Up}))
	e.Do(b.SwiGLU(s.gate, s.gate, s.up))
	e.Do(b.Linear(s.h, s.gate, w.Down))
	e.Do(b.Add(x, x, s.h))
}
