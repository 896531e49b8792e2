package qwen3vl

import (
	"encoding/json"
	"errors"
	"fmt"

	"easel/engine/ml"
	"easel/engine/quant"
)

// The language head: the final RMSNorm (te.norm.weight) and the projection to the vocabulary
// (te.lm_head.weight, or the token embedding when the checkpoint ties them). The image pipeline
// never uses them; writing text (Generate) does. They are looked up at the first Generate, so an
// encoder that only encodes never touches their pages.

// ErrNoLanguageHead marks a model file converted before Easel kept the language head.
var ErrNoLanguageHead = errors.New("the model file has no language head")

// languageHead is the bound head.
type languageHead struct {
	norm ml.Tensor
	w    *quant.Tensor
	tied bool
}

// HeadInfo says whether a model file can write text and what its head costs.
type HeadInfo struct {
	Present bool
	Tied    bool        // the head is the token embedding (no te.lm_head.weight)
	DType   quant.DType // the head's codec
	Bytes   int64       // the head's payload (the norm included); for a missing head, what reconverting adds
}

// DescribeHead inspects src's language head without reading its payload.
func DescribeHead(src quant.Source) (HeadInfo, error) {
	raw, err := configJSON(src, "te.config_json")
	if err != nil {
		return HeadInfo{}, err
	}
	c, err := ParseTextConfig(raw)
	if err != nil {
		return HeadInfo{}, err
	}
	normBytes := int64(4 * c.Hidden)
	if t, err := src.Tensor("te.norm.weight"); err != nil || t == nil {
		// What reconverting adds: the head in the text encoder's codec, unless the checkpoint ties it.
		info := HeadInfo{Tied: tiedHead(raw), DType: quant.F32, Bytes: normBytes}
		if !info.Tied {
			if q, err := src.Tensor("te.layers.0.self_attn.q_proj.weight"); err == nil && q != nil {
				info.DType = q.DType
			}
			if n, ok := quant.PayloadSize(info.DType, []int{c.Vocab, c.Hidden}); ok {
				info.Bytes += n
			}
		}
		return info, nil
	}
	if t, err := src.Tensor("te.lm_head.weight"); err == nil && t != nil {
		return HeadInfo{Present: true, DType: t.DType, Bytes: normBytes + int64(len(t.Data))}, nil
	}
	e, err := src.Tensor("te.embed_tokens.weight")
	if err != nil || e == nil {
		return HeadInfo{}, fmt.Errorf("the model has no te.embed_tokens.weight: it is not a complete Qwen-Image-2.1 file; convert the snapshot again")
	}
	return HeadInfo{Present: true, Tied: true, DType: e.DType, Bytes: normBytes}, nil
}

// NoHeadAdvice is the one sentence a front end shows for a file without the head.
func NoHeadAdvice(info HeadInfo) string {
	return fmt.Sprintf("this model file was converted before Easel could write text and lacks the language head (the final norm and lm_head, %.0f MB): convert the snapshot again with `easel convert` to add it", float64(info.Bytes)/1e6)
}

// tiedHead reads tie_word_embeddings from te.config_json (Qwen3-VL's default is false).
func tiedHead(raw []byte) bool {
	var j struct {
		Tie *bool `json:"tie_word_embeddings"`
	}
	return json.Unmarshal(raw, &j) == nil && j.Tie != nil && *j.Tie
}

// languageHead binds the head at its first use.
func (e *Encoder) languageHead() (*languageHead, error) {
	if e.head != nil {
		return e.head, nil
	}
	info, err := DescribeHead(e.src)
	if err != nil {
		return nil, fmt.Errorf("language head: %w", err)
	}
	if !info.Present {
		return nil, fmt.Errorf("%w: %s", ErrNoLanguageHead, NoHeadAdvice(info))
	}
	c := e.text
	shapes := map[string][]int{"te.norm.weight": {c.Hidden}, "te.lm_head.weight": {c.Vocab, c.Hidden}}
	b := &ml.Binder{Src: e.src, B: e.backend, Network: "language head", Shape: ml.ShapeMap(shapes), MatrixView: true, RowVectors: true}
	h := &languageHead{tied: info.Tied}
	if h.norm, err = b.Vector("te.norm.weight"); err != nil {
		return nil, err
	}
	if info.Tied {
		raw, _ := configJSON(e.src, "te.config_json")
		if !tiedHead(raw) {
			return nil, fmt.Errorf("language head: the file has the final norm but no te.lm_head.weight, and its text config does not tie the head to the embedding: the file is damaged; convert the snapshot again")
		}
		h.w = e.lm.w.embed
	} else if h.w, err = b.Matrix("te.lm_head.weight"); err != nil {
		return nil, err
	}
	e.head = h
	return h, nil
}

// HasLanguageHead reports whether the encoder's model can write text; err says why not.
func (e *Encoder) HasLanguageHead() error {
	_, err := e.languageHead()
	return err
}
