package vae

import (
	"math"

	"easel/engine/ml"
)

// attnBlock is QwenImage21AttentionBlock (spec §8.3): single-head self-attention over the pixels
// of a channel-first map, with a channel RMS norm in front and a 1×1 projection behind, added
// back to its input.
type attnBlock struct {
	Norm rmsNorm `weight:"norm"`
	QKV  conv    `weight:"to_qkv"`
	Proj conv    `weight:"proj"`
}

// forward is x + proj(attention(norm(x))).
func (a *attnBlock) forward(e *ml.Scope, x ml.Tensor) ml.Tensor {
	if e.Err() != nil {
		return nil
	}
	c, h, w := chw(x)
	qkv := chain(e, x, a.Norm.apply, a.QKV.same)
	// q, k and v are the channel ranges [0,C), [C,2C), [2C,3C): contiguous [C, H·W] blocks that
	// become token rows [H·W, C] (token = y·W + x).
	var tokens [3]ml.Tensor
	for i := range tokens {
		part := e.Slice(qkv, i*c*h*w, c, h*w)
		tokens[i] = e.Temp(h*w, c)
		e.Do(e.B.Transpose(tokens[i], part))
	}
	e.Free(qkv)
	att := e.Temp(h*w, c)
	spec := ml.AttnSpec{Heads: 1, KVHeads: 1, HeadDim: c, Scale: float32(1 / math.Sqrt(float64(c)))}
	e.Do(e.B.Attention(att, tokens[0], tokens[1], tokens[2], nil, nil, spec))
	back := e.Temp(c, h, w)
	e.Do(e.B.Transpose(flat(e, back), att))
	e.Free(att)
	out := a.Proj.same(e, back)
	e.Free(back)
	e.Do(e.B.Add(out, out, x))
	for _, t := range tokens {
		e.Free(t)
	}
	return out
}

// midBlock is resnets.0 → attentions.0 → resnets.1 at the narrowest resolution.
type midBlock struct {
	Res0 resBlock  `weight:"resnets.0"`
	Attn attnBlock `weight:"attentions.0"`
	Res1 resBlock  `weight:"resnets.1"`
}

func (m *midBlock) forward(e *ml.Scope, x ml.Tensor) ml.Tensor {
	return chain(e, x, m.Res0.forward, m.Attn.forward, m.Res1.forward)
}

// newMidBlock is the mid block at c channels.
func newMidBlock(c int) midBlock {
	return midBlock{Res0: newResBlock(c, c), Res1: newResBlock(c, c)}
}
