package qwen3vl

import (
	"fmt"
	"slices"

	"easel/engine/ml"
	"easel/engine/quant"
)

// binder looks weights up in a quant.Source, checks their shapes and uploads the small vectors
// (norm weights, biases) to the backend. The first failure is kept and every later call is a
// no-op, so a binding function reads as a list of names and reports one error at the end.
type binder struct {
	src     quant.Source
	backend ml.Backend
	err     error
}

// matrix binds a 2-D weight of shape [rows, cols] that stays in the source (quantized or not).
func (b *binder) matrix(name string, rows, cols int) *quant.Tensor {
	if b.err != nil {
		return nil
	}
	t, err := b.src.Tensor(name)
	if err != nil {
		b.err = fmt.Errorf("text encoder weight %s: %w", name, err)
		return nil
	}
	if t.Rows() != rows || t.Cols() != cols {
		b.err = fmt.Errorf("text encoder weight %s has shape %v, the config calls for [%d, %d]: the model file does not match its config; convert it again", name, t.Shape, rows, cols)
		return nil
	}
	return t
}

// vector binds a 1-D weight of n values (any float codec) as a one-row backend tensor.
func (b *binder) vector(name string, n int) ml.Tensor {
	if b.err != nil {
		return nil
	}
	t, err := b.src.Tensor(name)
	if err != nil {
		b.err = fmt.Errorf("text encoder weight %s: %w", name, err)
		return nil
	}
	if t.Rows()*t.Cols() != n {
		b.err = fmt.Errorf("text encoder weight %s has shape %v, the config calls for [%d]: the model file does not match its config; convert it again", name, t.Shape, n)
		return nil
	}
	v, err := quant.Dequantize(&quant.Tensor{Name: t.Name, DType: t.DType, Shape: []int{1, n}, Data: t.Data})
	if err != nil {
		b.err = fmt.Errorf("text encoder weight %s: %w", name, err)
		return nil
	}
	up, err := b.backend.Upload(v, 1, n)
	if err != nil {
		b.err = fmt.Errorf("text encoder weight %s: upload: %w", name, err)
		return nil
	}
	return up
}

// configJSON reads a JSON blob stored as a u8 tensor (te.config_json, vis.config_json).
func configJSON(src quant.Source, name string) ([]byte, error) {
	t, err := src.Tensor(name)
	if err != nil {
		return nil, err
	}
	if t.DType != quant.U8 {
		return nil, fmt.Errorf("%s is stored as %v, not u8 JSON bytes: the model file was written by an incompatible tool", name, t.DType)
	}
	return t.Data, nil
}

// lmLayer is one decoder layer of the language model, bound by ml.Binder under "te.layers.{i}.".
type lmLayer struct {
	InputNorm ml.Tensor     `weight:"input_layernorm.weight"`          // [1, hidden]
	PostNorm  ml.Tensor     `weight:"post_attention_layernorm.weight"` // [1, hidden]
	QNorm     ml.Tensor     `weight:"self_attn.q_norm.weight"`         // [1, head_dim]
	KNorm     ml.Tensor     `weight:"self_attn.k_norm.weight"`         // [1, head_dim]
	Q         *quant.Tensor `weight:"self_attn.q_proj.weight"`
	K         *quant.Tensor `weight:"self_attn.k_proj.weight"`
	V         *quant.Tensor `weight:"self_attn.v_proj.weight"`
	O         *quant.Tensor `weight:"self_attn.o_proj.weight"`
	Gate      *quant.Tensor `weight:"mlp.gate_proj.weight"`
	Up        *quant.Tensor `weight:"mlp.up_proj.weight"`
	Down      *quant.Tensor `weight:"mlp.down_proj.weight"`
}

// lmWeights is the language model: the token embedding stays in the source (q8_row or bf16) and
// only the rows a prompt uses are decoded.
type lmWeights struct {
	embed  *quant.Tensor
	layers []lmLayer
}

// lmShapes is every language-model tensor's shape under the config, by .cmf name.
func lmShapes(c TextConfig) map[string][]int {
	qw, kvw := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	s := map[string][]int{"te.embed_tokens.weight": {c.Vocab, c.Hidden}}
	for i := range c.Layers {
		p := fmt.Sprintf("te.layers.%d.", i)
		s[p+"input_layernorm.weight"] = []int{c.Hidden}
		s[p+"post_attention_layernorm.weight"] = []int{c.Hidden}
		s[p+"self_attn.q_norm.weight"] = []int{c.HeadDim}
		s[p+"self_attn.k_norm.weight"] = []int{c.HeadDim}
		s[p+"self_attn.q_proj.weight"] = []int{qw, c.Hidden}
		s[p+"self_attn.k_proj.weight"] = []int{kvw, c.Hidden}
		s[p+"self_attn.v_proj.weight"] = []int{kvw, c.Hidden}
		s[p+"self_attn.o_proj.weight"] = []int{c.Hidden, qw}
		s[p+"mlp.gate_proj.weight"] = []int{c.Intermediate, c.Hidden}
		s[p+"mlp.up_proj.weight"] = []int{c.Intermediate, c.Hidden}
		s[p+"mlp.down_proj.weight"] = []int{c.Hidden, c.Intermediate}
	}
	return s
}

// bindLanguageModel binds the language model's weights (te.*) with ml.Binder: matrices in place,
// norm weights uploaded as one row each.
func bindLanguageModel(src quant.Source, be ml.Backend, c TextConfig) (*lmWeights, error) {
	b := &ml.Binder{Src: src, B: be, Network: "text encoder", Shape: ml.ShapeMap(lmShapes(c)), MatrixView: true, RowVectors: true}
	embed, err := b.Matrix("te.embed_tokens.weight")
	if err != nil {
		return nil, err
	}
	w := &lmWeights{embed: embed, layers: make([]lmLayer, c.Layers)}
	for i := range w.layers {
		if err := b.Bind(&w.layers[i], fmt.Sprintf("te.layers.%d.", i)); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// linearBias is a linear layer with a bias row.
type linearBias struct {
	w    *quant.Tensor
	bias ml.Tensor
}

func (b *binder) linear(prefix string, out, in int) linearBias {
	return linearBias{w: b.matrix(prefix+".weight", out, in), bias: b.vector(prefix+".bias", out)}
}

// layerNorm is a LayerNorm's weight and bias rows.
type layerNorm struct{ w, b ml.Tensor }

func (b *binder) layerNorm(prefix string, n int) layerNorm {
	return layerNorm{w: b.vector(prefix+".weight", n), b: b.vector(prefix+".bias", n)}
}

// visionBlock is one ViT block.
type visionBlock struct {
	norm1, norm2 layerNorm
	qkv, proj    linearBias
	fc1, fc2     linearBias
}

// patchMerger turns each 2×2 window of vision tokens into one language-model row. The final
// merger normalizes each token before the merge (norm width = vision hidden); the DeepStack
// mergers normalize the merged row (norm width = 4·hidden).
type patchMerger struct {
	norm        layerNorm
	postShuffle bool
	fc1, fc2    linearBias
}

// visionWeights is the vision tower.
type visionWeights struct {
	patchEmbed linearBias
	// posEmbed is the learned [GridSide², Hidden] position table, interpolated per image.
	posEmbed  *quant.Tensor
	blocks    []visionBlock
	merger    patchMerger
	deepstack []patchMerger
}

func bindVision(b *binder, c VisionConfig) *visionWeights {
	C, merged := c.Hidden, c.Hidden*c.MergeSize*c.MergeSize
	w := &visionWeights{posEmbed: b.matrix("vis.pos_embed.weight", c.PositionEmbeddings, C)}
	// cortiq's packer names the Conv3d "vis.patch_embed.{weight,bias}"; a straight rename of
	// the Hugging Face name keeps ".proj".
	patch := "vis.patch_embed"
	if _, err := b.src.Tensor(patch + ".weight"); err != nil {
		if _, err2 := b.src.Tensor(patch + ".proj.weight"); err2 == nil {
			patch += ".proj"
		}
	}
	w.patchEmbed = b.linear(patch, C, c.PatchValues())
	for i := range c.Depth {
		p := fmt.Sprintf("vis.blocks.%d.", i)
		w.blocks = append(w.blocks, visionBlock{
			norm1: b.layerNorm(p+"norm1", C),
			norm2: b.layerNorm(p+"norm2", C),
			qkv:   b.linear(p+"attn.qkv", 3*C, C),
			proj:  b.linear(p+"attn.proj", C, C),
			fc1:   b.linear(p+"mlp.linear_fc1", c.Intermediate, C),
			fc2:   b.linear(p+"mlp.linear_fc2", C, c.Intermediate),
		})
	}
	bindMerger := func(prefix string, postShuffle bool) patchMerger {
		normWidth := C
		if postShuffle {
			normWidth = merged
		}
		return patchMerger{
			norm:        b.layerNorm(prefix+".norm", normWidth),
			postShuffle: postShuffle,
			fc1:         b.linear(prefix+".linear_fc1", merged, merged),
			fc2:         b.linear(prefix+".linear_fc2", c.OutHidden, merged),
		}
	}
	w.merger = bindMerger("vis.merger", false)
	for k := range c.DeepstackIndexes {
		w.deepstack = append(w.deepstack, bindMerger(fmt.Sprintf("vis.deepstack.%d", k), true))
	}
	return w
}

// deepstackSlot is the merger index fed by vision block i, or −1.
func deepstackSlot(c VisionConfig, block int) int {
	return slices.Index(c.DeepstackIndexes, block)
}
