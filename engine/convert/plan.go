package convert

import (
	"fmt"
	"slices"
	"strings"

	"easel/engine/quant"
	"easel/engine/safetensors"
)

// The tensor plan: which source tensor becomes which CMF tensor, in which codec and order
// (cmf.md §10.2 and §10.4, cortiq's qi21pack).

// blockProjections are the seven DiT block projections the quantized codec applies to.
var blockProjections = []string{
	"attn.to_q.weight", "attn.to_k.weight", "attn.to_v.weight", "attn.to_out.0.weight",
	"img_mlp.gate_layer.weight", "img_mlp.proj.weight", "img_mlp.out.weight",
}

// item is one tensor of the output file.
type item struct {
	out   string // CMF name
	shard *shard
	src   *safetensors.Tensor
	dtype quant.DType // the stored codec
	shape []int       // the stored shape (the source's, except the flattened patch embedding)
}

// plan lists the output tensors of the three components in cortiq's order and the source tensors
// left out, with the reason.
func plan(dit, te, vae []*shard, c codecs, vision bool) (items []item, skipped []string, err error) {
	add := func(s *shard, t *safetensors.Tensor, out string, cd codec, shape []int) {
		if err != nil {
			return
		}
		var it item
		it, err = resolve(s, t, out, cd, shape)
		items = append(items, it)
	}
	for _, s := range dit {
		for _, t := range s.tensors {
			n := t.Name
			cd := asF32
			switch {
			case strings.HasPrefix(n, "transformer_blocks.") && slices.ContainsFunc(blockProjections, func(p string) bool { return strings.HasSuffix(n, "."+p) }):
				cd = c.dit
			case len(t.Shape) == 2:
				cd = keepSource
			}
			add(s, t, "dit."+n, cd, t.Shape)
		}
	}
	for _, s := range te {
		for _, t := range s.tensors {
			if lm, ok := strings.CutPrefix(t.Name, "model.language_model."); ok {
				switch {
				case lm == "norm.weight":
					// The image pipeline taps the last layer before it; writing text needs it.
					add(s, t, "te.norm.weight", asF32, t.Shape)
				case lm == "embed_tokens.weight":
					cd := c.te
					if cd.quantizes() {
						cd = asQ8Row
					}
					add(s, t, "te."+lm, cd, t.Shape)
				case len(t.Shape) == 2 && strings.HasSuffix(lm, "_proj.weight"):
					add(s, t, "te."+lm, c.te, t.Shape)
				default:
					add(s, t, "te."+lm, asF32, t.Shape)
				}
				continue
			}
			if t.Name == "lm_head.weight" {
				// The language head, for writing text (Describe, Expand, Check). A snapshot that ties
				// it to the embedding has none, and readers then use te.embed_tokens.weight.
				add(s, t, "te.lm_head.weight", c.te, t.Shape)
				continue
			}
			vis, ok := strings.CutPrefix(t.Name, "model.visual.")
			switch {
			case !ok:
				skipped = append(skipped, s.rel+": "+t.Name+" (not used by the image pipeline)")
			case !vision:
				skipped = append(skipped, s.rel+": "+t.Name+" (vision tower left out)")
			case vis == "patch_embed.proj.weight":
				flat := 1
				for _, d := range t.Shape[1:] {
					flat *= d
				}
				add(s, t, "vis.patch_embed.weight", keepSource, []int{t.Shape[0], flat})
			case vis == "patch_embed.proj.bias":
				add(s, t, "vis.patch_embed.bias", asF32, t.Shape)
			case vis == "pos_embed.weight":
				add(s, t, "vis.pos_embed.weight", asF32, t.Shape)
			default:
				cd := asF32
				if len(t.Shape) == 2 && strings.HasSuffix(vis, ".weight") && !strings.Contains(vis, "norm") {
					cd = c.vis
				}
				add(s, t, "vis."+strings.ReplaceAll(vis, "deepstack_merger_list.", "deepstack."), cd, t.Shape)
			}
		}
	}
	for _, s := range vae {
		for _, t := range s.tensors {
			if strings.Contains(t.Name, ".time_conv.") {
				skipped = append(skipped, s.rel+": "+t.Name+" (temporal convolution: never runs on a single frame)")
				continue
			}
			cd := asF32
			if strings.HasSuffix(t.Name, ".weight") && len(t.Shape) >= 2 {
				cd = c.vae
			}
			add(s, t, "vae."+t.Name, cd, t.Shape)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.out] {
			return nil, nil, fmt.Errorf("two source tensors map to %q: the snapshot is not a Qwen-Image-2.1 layout Easel knows", it.out)
		}
		seen[it.out] = true
	}
	return items, skipped, nil
}

// sourceDType maps a safetensors dtype to the CMF dtype that stores it unchanged.
func sourceDType(s string) (quant.DType, bool) {
	switch s {
	case "F32":
		return quant.F32, true
	case "F16":
		return quant.F16, true
	case "BF16":
		return quant.BF16, true
	}
	return 0, false
}

// resolve fixes the stored dtype of one tensor: the source's own for keepSource, q8_2f instead of
// q4tp when the columns do not fill whole 32-weight tiles.
func resolve(s *shard, t *safetensors.Tensor, out string, cd codec, shape []int) (item, error) {
	src, ok := sourceDType(t.DType)
	if !ok {
		return item{}, fmt.Errorf("%s: tensor %q is %s; Easel converts f32, f16 and bf16 weights only", s.rel, t.Name, t.DType)
	}
	d := cd.dtype
	if cd.keepSource {
		d = src
	}
	if d == quant.Q4TP && (len(shape) != 2 || shape[1]%quant.GroupSize != 0) {
		d = quant.Q8_2F
	}
	if _, ok := quant.PayloadSize(d, shape); !ok {
		return item{}, fmt.Errorf("%s: tensor %q of shape %v cannot be stored as %v", s.rel, t.Name, shape, d)
	}
	return item{out: out, shard: s, src: t, dtype: d, shape: shape}, nil
}
