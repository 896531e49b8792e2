package qwen3vl

import (
	"context"
	"fmt"

	"easel/engine/ml"
	"easel/engine/quant"
)

// defaultImageTokenID is <|image_pad|>, Qwen3-VL's image_token_id (spec §1.3). te.config_json
// holds only the text config, so the id comes from there only when a packer added it.
const defaultImageTokenID = 151655

// Encoder is the Qwen3-VL text encoder bound to a model's weights on one backend. It is not safe
// for concurrent use: run one Encode at a time.
type Encoder struct {
	backend ml.Backend
	text    TextConfig
	lm      *languageModel
	// vision is nil when the model has no vision tower; visionErr then says why.
	vision       *visionTower
	visionErr    error
	imageTokenID int32
	// src keeps the weights for the language head, bound at its first use (head.go).
	src  quant.Source
	head *languageHead
}

// NewEncoder binds the language model (te.*, te.config_json) and, when the source has one, the
// vision tower (vis.*, vis.config_json) from src. Small vectors are uploaded to b; matrices stay in
// src and are read in place.
func NewEncoder(b ml.Backend, src quant.Source) (*Encoder, error) {
	raw, err := configJSON(src, "te.config_json")
	if err != nil {
		return nil, fmt.Errorf("text encoder: %w", err)
	}
	tc, err := ParseTextConfig(raw)
	if err != nil {
		return nil, err
	}
	lmw, err := bindLanguageModel(src, b, tc)
	if err != nil {
		return nil, err
	}
	e := &Encoder{backend: b, text: tc, lm: &languageModel{b: b, c: tc, w: lmw}, imageTokenID: defaultImageTokenID, src: src}
	if id, ok := imageTokenID(raw); ok {
		e.imageTokenID = id
	}

	visRaw, err := configJSON(src, "vis.config_json")
	if err != nil {
		e.visionErr = fmt.Errorf("the model has no vision tower (%v): it was converted without one; convert it again with the vision tower to use condition images", err)
		return e, nil
	}
	vc, err := ParseVisionConfig(visRaw)
	if err != nil {
		return nil, err
	}
	if vc.OutHidden != tc.Hidden {
		return nil, fmt.Errorf("vis.config_json: out_hidden_size %d differs from the language model's hidden_size %d", vc.OutHidden, tc.Hidden)
	}
	if len(vc.DeepstackIndexes) > tc.Layers {
		return nil, fmt.Errorf("vis.config_json: %d DeepStack mergers but the language model has only %d layers", len(vc.DeepstackIndexes), tc.Layers)
	}
	vw, err := bindVision(src, b, vc)
	if err != nil {
		return nil, err
	}
	e.vision = &visionTower{b: b, c: vc, w: vw}
	return e, nil
}

// TextConfig is the language model's geometry.
func (e *Encoder) TextConfig() TextConfig { return e.text }

// VisionConfig is the vision tower's geometry; ok is false when the model has none.
func (e *Encoder) VisionConfig() (c VisionConfig, ok bool) {
	if e.vision == nil {
		return VisionConfig{}, false
	}
	return e.vision.c, true
}

// Encode runs the encoder over one unpadded prompt: ids are the token ids (with one run of
// <|image_pad|> tokens per image, as the prompt builder expands them) and images the condition
// images in prompt order. It returns the last decoder layer's output before the final norm,
// len(ids) rows of TextConfig().Hidden values, row-major. ctx cancels between layers.
func (e *Encoder) Encode(ctx context.Context, ids []int32, images []VisionInput) ([]float32, error) {
	x, _, err := e.run(ctx, ids, images, nil)
	if err != nil {
		return nil, err
	}
	defer e.backend.Free(x)
	out, err := e.backend.Download(x)
	if err != nil {
		return nil, fmt.Errorf("text encoder: %w", err)
	}
	return out, nil
}

// run is Encode's pass on the device: it returns the residual stream x [len(ids), hidden] (the
// caller frees it) and next, the mRoPE position the token after the prompt takes (one more than
// the largest position of the prompt, images included). With a cache, the prompt's keys and
// values are appended to it.
func (e *Encoder) run(ctx context.Context, ids []int32, images []VisionInput, cache *kvCache) (ml.Tensor, int, error) {
	b, D := e.backend, e.text.Hidden
	if len(ids) == 0 {
		return nil, 0, fmt.Errorf("text encoder: the prompt has no tokens")
	}
	pos, runs, host, err := e.promptLayout(ids, images)
	if err != nil {
		return nil, 0, err
	}

	// One image at a time through the tower: attention never crosses images, and the
	// activations stay those of the largest image rather than of all of them.
	vis := make([]*visionOutput, len(images))
	defer func() {
		for _, v := range vis {
			if v != nil {
				v.free(b)
			}
		}
	}()
	for i := range images {
		if vis[i], err = e.vision.encode(ctx, images[i:i+1]); err != nil {
			return nil, 0, fmt.Errorf("text encoder: condition image %d: %w", i+1, err)
		}
	}

	n := len(ids)
	x, err := b.Upload(host, n, D)
	if err != nil {
		return nil, 0, fmt.Errorf("text encoder: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			b.Free(x)
		}
	}()
	if e.lm.tap != nil {
		e.lm.tap("embed_tokens", x)
	}
	if len(vis) > 0 {
		embeds := func(v *visionOutput) ml.Tensor { return v.embeds }
		if err := e.eachImageRun(x, runs, vis, embeds, b.Copy); err != nil {
			return nil, 0, fmt.Errorf("text encoder: image embeddings: %w", err)
		}
	}
	half := e.text.HeadDim / 2
	cosT, sinT := mropeTables(pos, e.text.HeadDim, e.text.RopeTheta, e.text.MRopeSection)
	cos, err := b.Upload(cosT, n, half)
	if err != nil {
		return nil, 0, fmt.Errorf("text encoder: %w", err)
	}
	defer b.Free(cos)
	sin, err := b.Upload(sinT, n, half)
	if err != nil {
		return nil, 0, fmt.Errorf("text encoder: %w", err)
	}
	defer b.Free(sin)

	var inject func(layer int) error
	if len(vis) > 0 {
		add := func(dst, src ml.Tensor) error { return b.Add(dst, dst, src) }
		inject = func(layer int) error {
			if layer >= len(e.vision.c.DeepstackIndexes) {
				return nil
			}
			feats := func(v *visionOutput) ml.Tensor { return v.deepstack[layer] }
			return e.eachImageRun(x, runs, vis, feats, add)
		}
	}
	if err := e.lm.forwardCached(ctx, x, n, &ml.Rope{Cos: cos, Sin: sin, Pairs: ml.HalfSplit}, inject, cache); err != nil {
		return nil, 0, fmt.Errorf("text encoder: %w", err)
	}
	next := 0
	for _, p := range pos {
		next = max(next, p[0]+1, p[1]+1, p[2]+1)
	}
	ok = true
	return x, next, nil
}

// eachImageRun applies op(rows of x at image i's tokens, pick(vision output of image i)) for every
// image in prompt order; the picked tensor holds one row per merged token.
func (e *Encoder) eachImageRun(x ml.Tensor, runs []imageRun, vis []*visionOutput, pick func(*visionOutput) ml.Tensor, op func(dst, src ml.Tensor) error) error {
	b, D := e.backend, e.text.Hidden
	for i, r := range runs {
		dst, err := b.Slice(x, r.start*D, r.count, D)
		if err != nil {
			return err
		}
		if err := op(dst, pick(vis[i])); err != nil {
			return err
		}
	}
	return nil
}

// DropPrefixRows removes the first drop rows of a row-major [rows, width] hidden state: the
// system-prompt tokens the pipeline discards (spec §1.2, 14 on the shipped tokenizer). The
// result shares hidden's storage.
func DropPrefixRows(hidden []float32, width, drop int) ([]float32, error) {
	if width <= 0 || len(hidden)%width != 0 {
		return nil, fmt.Errorf("drop prefix rows: %d values are not whole rows of %d", len(hidden), width)
	}
	if rows := len(hidden) / width; drop < 0 || drop > rows {
		return nil, fmt.Errorf("drop prefix rows: cannot drop %d of %d rows: the prompt is shorter than its system prefix", drop, rows)
	}
	return hidden[drop*width:], nil
}
