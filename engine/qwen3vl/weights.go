package qwen3vl

import (
	"fmt"
	"slices"

	"easel/engine/ml"
	"easel/engine/quant"
)

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

// visionBlock is one ViT block, bound by ml.Binder under "vis.blocks.{i}.".
type visionBlock struct {
	Norm1W ml.Tensor     `weight:"norm1.weight"`
	Norm1B ml.Tensor     `weight:"norm1.bias"`
	Norm2W ml.Tensor     `weight:"norm2.weight"`
	Norm2B ml.Tensor     `weight:"norm2.bias"`
	QKV    *quant.Tensor `weight:"attn.qkv.weight"`
	QKVB   ml.Tensor     `weight:"attn.qkv.bias"`
	Proj   *quant.Tensor `weight:"attn.proj.weight"`
	ProjB  ml.Tensor     `weight:"attn.proj.bias"`
	FC1    *quant.Tensor `weight:"mlp.linear_fc1.weight"`
	FC1B   ml.Tensor     `weight:"mlp.linear_fc1.bias"`
	FC2    *quant.Tensor `weight:"mlp.linear_fc2.weight"`
	FC2B   ml.Tensor     `weight:"mlp.linear_fc2.bias"`
}

// patchMerger turns each 2×2 window of vision tokens into one language-model row, bound under
// "vis.merger." or "vis.deepstack.{k}.". The final merger normalizes each token before the merge
// (norm width = vision hidden); the DeepStack mergers normalize the merged row (norm width =
// 4·hidden).
type patchMerger struct {
	NormW       ml.Tensor     `weight:"norm.weight"`
	NormB       ml.Tensor     `weight:"norm.bias"`
	FC1         *quant.Tensor `weight:"linear_fc1.weight"`
	FC1B        ml.Tensor     `weight:"linear_fc1.bias"`
	FC2         *quant.Tensor `weight:"linear_fc2.weight"`
	FC2B        ml.Tensor     `weight:"linear_fc2.bias"`
	postShuffle bool
}

// visionWeights is the vision tower.
type visionWeights struct {
	// posEmbed is the learned [GridSide², Hidden] position table, interpolated per image.
	posEmbed   *quant.Tensor
	patchEmbed *quant.Tensor // the patch Conv3d viewed as a matrix [Hidden, PatchValues]
	patchBias  ml.Tensor
	blocks     []visionBlock
	merger     patchMerger
	deepstack  []patchMerger
}

// visionShapes is every vision tensor's shape under the config, by .cmf name; patch is the patch
// embedding's name stem.
func visionShapes(c VisionConfig, patch string) map[string][]int {
	C, merged := c.Hidden, c.Hidden*c.MergeSize*c.MergeSize
	s := map[string][]int{
		"vis.pos_embed.weight": {c.PositionEmbeddings, C},
		patch + ".weight":      {C, c.PatchValues()},
		patch + ".bias":        {C},
	}
	for i := range c.Depth {
		p := fmt.Sprintf("vis.blocks.%d.", i)
		for _, n := range []string{"norm1", "norm2"} {
			s[p+n+".weight"], s[p+n+".bias"] = []int{C}, []int{C}
		}
		for _, l := range []struct {
			name    string
			out, in int
		}{{"attn.qkv", 3 * C, C}, {"attn.proj", C, C}, {"mlp.linear_fc1", c.Intermediate, C}, {"mlp.linear_fc2", C, c.Intermediate}} {
			s[p+l.name+".weight"], s[p+l.name+".bias"] = []int{l.out, l.in}, []int{l.out}
		}
	}
	merger := func(prefix string, normWidth int) {
		s[prefix+"norm.weight"], s[prefix+"norm.bias"] = []int{normWidth}, []int{normWidth}
		s[prefix+"linear_fc1.weight"], s[prefix+"linear_fc1.bias"] = []int{merged, merged}, []int{merged}
		s[prefix+"linear_fc2.weight"], s[prefix+"linear_fc2.bias"] = []int{c.OutHidden, merged}, []int{c.OutHidden}
	}
	merger("vis.merger.", C)
	for k := range c.DeepstackIndexes {
		merger(fmt.Sprintf("vis.deepstack.%d.", k), merged)
	}
	return s
}

// bindVision binds the vision tower's weights (vis.*) with ml.Binder.
func bindVision(src quant.Source, be ml.Backend, c VisionConfig) (*visionWeights, error) {
	// cortiq's packer names the Conv3d "vis.patch_embed.{weight,bias}"; a straight rename of
	// the Hugging Face name keeps ".proj".
	patch := "vis.patch_embed"
	if _, err := src.Tensor(patch + ".weight"); err != nil {
		if _, err2 := src.Tensor(patch + ".proj.weight"); err2 == nil {
			patch += ".proj"
		}
	}
	b := &ml.Binder{Src: src, B: be, Network: "text encoder", Shape: ml.ShapeMap(visionShapes(c, patch)), MatrixView: true, RowVectors: true}
	w := &visionWeights{blocks: make([]visionBlock, c.Depth)}
	var err error
	if w.posEmbed, err = b.Matrix("vis.pos_embed.weight"); err != nil {
		return nil, err
	}
	if w.patchEmbed, err = b.Matrix(patch + ".weight"); err != nil {
		return nil, err
	}
	if w.patchBias, err = b.Vector(patch + ".bias"); err != nil {
		return nil, err
	}
	for i := range w.blocks {
		if err := b.Bind(&w.blocks[i], fmt.Sprintf("vis.blocks.%d.", i)); err != nil {
			return nil, err
		}
	}
	if err := b.Bind(&w.merger, "vis.merger."); err != nil {
		return nil, err
	}
	w.deepstack = make([]patchMerger, len(c.DeepstackIndexes))
	for k := range w.deepstack {
		w.deepstack[k].postShuffle = true
		if err := b.Bind(&w.deepstack[k], fmt.Sprintf("vis.deepstack.%d.", k)); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// deepstackSlot is the merger index fed by vision block i, or −1.
func deepstackSlot(c VisionConfig, block int) int {
	return slices.Index(c.DeepstackIndexes, block)
}
