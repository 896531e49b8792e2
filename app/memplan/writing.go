package memplan

import (
	"easel/engine/cmf"
	"easel/engine/qwen3vl"
	"easel/engine/qwen3vl/qwen3vlmetal"
)

// Writing text (Describe, Expand, Check: app/textgen) runs the text encoder as a language model:
// the prompt (and an image through the vision tower) once, then one token at a time. Beside the
// language model's weights it touches the language head (te.lm_head.weight and the final norm,
// or the whole token embedding when the checkpoint ties them) and keeps a key/value cache of
// every layer for the prompt and the tokens written; each token's pass adds a row's activations
// and the vocabulary's logits.

// textHeadBytes is the language head's payload in f: te.lm_head.weight and the final norm, or 0
// when the file has no te.lm_head.weight (none at all, or tied to the embedding).
func textHeadBytes(f *cmf.File) int64 {
	head, ok := f.Entry("te.lm_head.weight")
	if !ok {
		return 0
	}
	n := int64(head.Size)
	if e, ok := f.Entry("te.norm.weight"); ok {
		n += int64(e.Size)
	}
	return n
}

// WritingPlan is one writing run's shape.
type WritingPlan struct {
	PromptTokens int     // the chat's tokens, an image's tokens included
	MaxTokens    int     // the most tokens written
	Image        *[3]int // the patch grid (t, h, w) of the image shown, or nil
	Metal        bool    // the text encoder runs on the Metal device
}

// WritingPrediction is what a writing run holds resident beyond the process.
type WritingPrediction struct {
	Weights int64 // the language model's (all of its token embedding when the head is tied), the head, and the vision tower's for an image
	Head    int64 // of Weights: the language head's
	KVCache int64 // float32 keys and values of every layer for the prompt and the tokens written
	Prefill int64 // the prompt's (and image's) activations, the larger of the two passes
	Decode  int64 // one token's activations and the logits
	Peak    int64 // Process + Weights + KVCache + max(Prefill, Decode)
	Budget  int64
	Fits    bool
}

// PredictWriting counts a writing run against a model geometry and a memory budget (0: unknown,
// it fits).
func PredictWriting(g Geometry, p WritingPlan, budget int64) WritingPrediction {
	tc := qwen3vl.TextConfig{Hidden: 4096, Layers: 36, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 12288, Vocab: 151936}
	if g.Text != nil {
		tc = *g.Text
	}
	var vc *qwen3vl.VisionConfig
	if g.Vision != nil {
		vc = g.Vision
	}
	weights := map[string]int64{}
	for _, w := range g.Weights {
		weights[w.Name] += w.Bytes
	}
	out := WritingPrediction{Budget: budget, Head: g.TextHead}
	// Every projection and the head are read per token; of the embedding only the prompt's rows,
	// unless the head is the embedding (then all of it, per token).
	out.Weights = weights["te"] - g.TextEmbedding
	if g.TextHead == 0 {
		out.Weights += g.TextEmbedding
		out.Head = g.TextEmbedding
	}
	var grids [][3]int
	if p.Image != nil {
		out.Weights += weights["vis"]
		grids = [][3]int{*p.Image}
	}
	out.KVCache = qwen3vl.KVCacheBytes(tc, p.PromptTokens+p.MaxTokens)
	// The prefill's activations are the device plan's (the same tensors on the CPU, where the
	// Go heap's headroom doubles them); one token is a row of each and the logits.
	out.Prefill = qwen3vlmetal.PlanEncodeFor(tc, vc, p.PromptTokens, grids)
	qw, kvw := tc.Heads*tc.HeadDim, tc.KVHeads*tc.HeadDim
	out.Decode = int64(2*tc.Hidden+2*qw+2*kvw+2*tc.Intermediate+tc.HeadDim+tc.Vocab)*4 +
		int64(tc.Heads)*int64(p.PromptTokens+p.MaxTokens)*4 // one row's scores over the cache
	working := max(out.Prefill, out.Decode)
	if !p.Metal {
		working *= heapHeadroom // the cache is allocated once at its full size: no headroom
	}
	out.Peak = Process + out.Weights + out.KVCache + working
	out.Fits = budget <= 0 || float64(out.Peak) <= (1-Reserve)*float64(budget)
	return out
}
