package qwen3vl

import (
	"context"
	"fmt"
	"time"

	"easel/engine/ml"
	"easel/engine/quant"
)

// A row decoder runs the language model one token row at a time with its own key/value cache: a
// device's decode path (engine/qwen3vl/qwen3vlmetal) that keeps every activation in float. The
// encoder prepares each row on its own backend (token embedding, the vision tower's embeddings
// and DeepStack features, the mRoPE tables) and samples; the decoder runs the layers, the final
// norm and the language head.

// RowLayer is one decoder layer's weights as a row decoder reads them: the norm gains as floats,
// the matrices as stored.
type RowLayer struct {
	InputNorm, PostNorm, QNorm, KNorm []float32
	Q, K, V, O, Gate, Up, Down        *quant.Tensor
}

// RowWeights are the language model's weights and its head for a row decoder.
type RowWeights struct {
	Config TextConfig
	Layers []RowLayer
	Norm   []float32     // te.norm.weight
	Head   *quant.Tensor // te.lm_head.weight, or the token embedding when tied
}

// RowInput is one token row: its hidden input, the rotary tables of its position (HeadDim/2 each)
// and, per layer, what DeepStack adds after that layer (nil entries or a short slice: nothing).
type RowInput struct {
	X        []float32
	Cos, Sin []float32
	Inject   [][]float32
}

// RowDecoder runs rows through the language model.
type RowDecoder interface {
	// Reset empties the cache and makes room for capacity rows.
	Reset(capacity int) error
	// Row runs in through every layer, appending its keys and values to the cache, and returns
	// the row's logits when logits is true (nil otherwise).
	Row(ctx context.Context, in RowInput, logits bool) ([]float32, error)
}

// RowWeights gathers the weights a row decoder needs (the language head is bound on first use;
// ErrNoLanguageHead when the file has none).
func (e *Encoder) RowWeights() (*RowWeights, error) {
	head, err := e.languageHead()
	if err != nil {
		return nil, err
	}
	get := func(t ml.Tensor) ([]float32, error) { return e.backend.Download(t) }
	w := &RowWeights{Config: e.text, Head: head.w}
	if w.Norm, err = get(head.norm); err != nil {
		return nil, fmt.Errorf("language head: %w", err)
	}
	for i := range e.lm.w.layers {
		l := &e.lm.w.layers[i]
		r := RowLayer{Q: l.Q, K: l.K, V: l.V, O: l.O, Gate: l.Gate, Up: l.Up, Down: l.Down}
		for _, v := range []struct {
			dst *[]float32
			src ml.Tensor
		}{{&r.InputNorm, l.InputNorm}, {&r.PostNorm, l.PostNorm}, {&r.QNorm, l.QNorm}, {&r.KNorm, l.KNorm}} {
			if *v.dst, err = get(v.src); err != nil {
				return nil, fmt.Errorf("language model layer %d: %w", i, err)
			}
		}
		w.Layers = append(w.Layers, r)
	}
	return w, nil
}

// GenerateRows is Generate with the language model run by dec, the prompt row by row (fine for
// the short prompts of describe and expand; a long prompt costs one pass over the weights per
// row). The vision tower runs on this encoder's backend.
func (e *Encoder) GenerateRows(ctx context.Context, ids []int32, images []VisionInput, opts GenerateOptions, dec RowDecoder) (*Generation, error) {
	if opts.MaxTokens <= 0 {
		return nil, fmt.Errorf("generate: the token limit is %d; give a positive one", opts.MaxTokens)
	}
	if err := opts.Sampling.Check(); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("generate: the prompt has no tokens")
	}
	start := time.Now()
	rows, next, err := e.promptRows(ctx, ids, images)
	if err != nil {
		return nil, err
	}
	if err := dec.Reset(len(ids) + opts.MaxTokens); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	var logits []float32
	for i, r := range rows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if logits, err = dec.Row(ctx, r, i == len(rows)-1); err != nil {
			return nil, fmt.Errorf("generate: prompt row %d: %w", i, err)
		}
	}
	g := &Generation{PromptTokens: len(ids), Prefill: time.Since(start)}
	return g, decodeLoop(ctx, g, ids, logits, opts, func(id int32, step int) ([]float32, error) {
		x, err := e.lm.embed([]int32{id})
		if err != nil {
			return nil, fmt.Errorf("generate: %w", err)
		}
		p := next + step
		cos, sin := mropeTables([][3]int{{p, p, p}}, e.text.HeadDim, e.text.RopeTheta, e.text.MRopeSection)
		return dec.Row(ctx, RowInput{X: x, Cos: cos, Sin: sin}, true)
	})
}

// promptRows prepares the prompt's rows as run does: token embeddings with each image's merged
// embeddings in its run, the DeepStack features of image rows, every row's mRoPE tables; next is
// the position after the prompt.
func (e *Encoder) promptRows(ctx context.Context, ids []int32, images []VisionInput) ([]RowInput, int, error) {
	D, half := e.text.Hidden, e.text.HeadDim/2
	pos, runs, host, err := e.promptLayout(ids, images)
	if err != nil {
		return nil, 0, err
	}
	cos, sin := mropeTables(pos, e.text.HeadDim, e.text.RopeTheta, e.text.MRopeSection)
	rows := make([]RowInput, len(ids))
	for i := range rows {
		rows[i] = RowInput{X: host[i*D : (i+1)*D], Cos: cos[i*half : (i+1)*half], Sin: sin[i*half : (i+1)*half]}
	}
	for i, r := range runs {
		v, err := e.vision.encode(ctx, images[i:i+1])
		if err != nil {
			return nil, 0, fmt.Errorf("text encoder: condition image %d: %w", i+1, err)
		}
		embeds, err := e.backend.Download(v.embeds)
		var feats [][]float32
		for _, t := range v.deepstack {
			if err == nil {
				var f []float32
				f, err = e.backend.Download(t)
				feats = append(feats, f)
			}
		}
		v.free(e.backend)
		if err != nil {
			return nil, 0, fmt.Errorf("text encoder: condition image %d: %w", i+1, err)
		}
		for k := range r.count {
			row := &rows[r.start+k]
			copy(row.X, embeds[k*D:(k+1)*D])
			for _, f := range feats {
				row.Inject = append(row.Inject, f[k*D:(k+1)*D])
			}
		}
	}
	next := 0
	for _, p := range pos {
		next = max(next, p[0]+1, p[1]+1, p[2]+1)
	}
	return rows, next, nil
}

// promptLayout is what the device pass (run) and the one-row decoder (promptRows) both need of
// a prompt: every row's mRoPE position (each image checked against its grid), the image runs, and the token
// embeddings read on the host.
func (e *Encoder) promptLayout(ids []int32, images []VisionInput) (pos [][3]int, runs []imageRun, host []float32, err error) {
	var grids []mergedGrid
	if len(images) > 0 {
		if e.vision == nil {
			return nil, nil, nil, fmt.Errorf("text encoder: %d condition images given, but %w", len(images), e.visionErr)
		}
		if grids, err = e.vision.checkImages(images); err != nil {
			return nil, nil, nil, fmt.Errorf("text encoder: %w", err)
		}
	}
	pos, runs, err = mropePositions(ids, e.imageTokenID, grids)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("text encoder: %w", err)
	}
	host, err = e.lm.embed(ids)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("text encoder: %w", err)
	}
	return pos, runs, host, nil
}
