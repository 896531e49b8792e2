package qi21

import (
	"strconv"

	"easel/engine/ml"
	"easel/engine/quant"
)

// Weights are the transformer's top-level tensors, bound by their diffusers names under "dit."
// (ml.Binder: the `weight` tag is the name).
// Large matrices stay in their codec (read in place); the small vectors are uploaded as float32.
type Weights struct {
	ImgIn      *quant.Tensor `weight:"img_in.weight"`
	TextNorm   ml.Tensor     `weight:"txt_in.text_norm.weight"`
	TxtIn      *quant.Tensor `weight:"txt_in.in_layer.weight"`
	TxtOut     *quant.Tensor `weight:"txt_in.out_layer.weight"`
	TimeIn     *quant.Tensor `weight:"time_text_embed.timestep_embedder.linear_1.weight"`
	TimeOut    *quant.Tensor `weight:"time_text_embed.timestep_embedder.linear_2.weight"`
	Modulation *quant.Tensor `weight:"modulation.1.weight"`
	NormOut    *quant.Tensor `weight:"norm_out.linear.weight"`
	ProjOut    *quant.Tensor `weight:"proj_out.weight"`
}

// Block is one transformer block's tensors, under "dit.transformer_blocks.{i}.".
type Block struct {
	ToQ   *quant.Tensor `weight:"attn.to_q.weight"`
	ToK   *quant.Tensor `weight:"attn.to_k.weight"`
	ToV   *quant.Tensor `weight:"attn.to_v.weight"`
	ToOut *quant.Tensor `weight:"attn.to_out.0.weight"`
	NormQ ml.Tensor     `weight:"attn.norm_q.weight"`
	NormK ml.Tensor     `weight:"attn.norm_k.weight"`
	Gate  *quant.Tensor `weight:"img_mlp.gate_layer.weight"`
	Up    *quant.Tensor `weight:"img_mlp.proj.weight"`
	Down  *quant.Tensor `weight:"img_mlp.out.weight"`
}

// expectedShapes is every tensor's shape under the config (spec §6.2), by name without "dit.".
func expectedShapes(c Config) map[string][]int {
	D, F := c.Hidden(), c.MLPHidden()
	s := map[string][]int{
		"img_in.weight":                                     {D, c.InChannels},
		"txt_in.text_norm.weight":                           {c.ContextDim},
		"txt_in.in_layer.weight":                            {D, c.ContextDim},
		"txt_in.out_layer.weight":                           {D, D},
		"time_text_embed.timestep_embedder.linear_1.weight": {D, timestepChannels},
		"time_text_embed.timestep_embedder.linear_2.weight": {D, D},
		"modulation.1.weight":                               {4 * D, D},
		"norm_out.linear.weight":                            {D, D},
		"proj_out.weight":                                   {c.OutChannels, D},
	}
	for l := 0; l < c.Layers; l++ {
		p := "transformer_blocks." + strconv.Itoa(l) + "."
		for _, n := range []string{"attn.to_q.weight", "attn.to_k.weight", "attn.to_v.weight", "attn.to_out.0.weight"} {
			s[p+n] = []int{D, D}
		}
		s[p+"attn.norm_q.weight"] = []int{c.HeadDim}
		s[p+"attn.norm_k.weight"] = []int{c.HeadDim}
		s[p+"img_mlp.gate_layer.weight"] = []int{F, D}
		s[p+"img_mlp.proj.weight"] = []int{F, D}
		s[p+"img_mlp.out.weight"] = []int{D, F}
	}
	return s
}
