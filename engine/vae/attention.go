package vae

import (
	"fmt"
	"math"

	"easel/engine/ml"
)

// attnBlock is QwenImage21AttentionBlock (spec §8.3): single-head self-attention over the pixels
// of a channel-first map, with a channel RMS norm in front and a 1×1 projection behind, added
// back to its input.
type attnBlock struct {
	norm      ml.Tensor
	qkv, proj *conv
	channels  int
}

func loadAttnBlock(l *loader, name string, c int) (*attnBlock, error) {
	a := &attnBlock{channels: c}
	var err error
	if a.norm, err = l.vector(name+".norm.gamma", c); err != nil {
		return nil, err
	}
	if a.qkv, err = l.conv(name+".to_qkv", c, 3*c, 1); err != nil {
		return nil, err
	}
	if a.proj, err = l.conv(name+".proj", c, c, 1); err != nil {
		return nil, err
	}
	return a, nil
}

// forward returns x + proj(attention(norm(x))); x is left for the caller to free.
func (a *attnBlock) forward(o ops, x ml.Tensor) (ml.Tensor, error) {
	c, h, w := chw(x)
	n, err := o.channelNorm(x, a.norm)
	if err != nil {
		return nil, err
	}
	qkv, err := o.same(n, a.qkv)
	o.b.Free(n)
	if err != nil {
		return nil, err
	}
	// q, k and v are the channel ranges [0,C), [C,2C), [2C,3C): contiguous [C, H·W] blocks that
	// become token rows [H·W, C] (token = y·W + x).
	var tokens [3]ml.Tensor
	defer func() {
		for _, t := range tokens {
			if t != nil {
				o.b.Free(t)
			}
		}
	}()
	for i := range tokens {
		part, err := o.b.Slice(qkv, i*c*h*w, c, h*w)
		if err != nil {
			o.b.Free(qkv)
			return nil, err
		}
		if tokens[i], err = o.b.New(h*w, c); err != nil {
			o.b.Free(qkv)
			return nil, err
		}
		if err := o.b.Transpose(tokens[i], part); err != nil {
			o.b.Free(qkv)
			return nil, err
		}
	}
	o.b.Free(qkv)
	att, err := o.b.New(h*w, c)
	if err != nil {
		return nil, err
	}
	spec := ml.AttnSpec{Heads: 1, KVHeads: 1, HeadDim: c, Scale: float32(1 / math.Sqrt(float64(c)))}
	if err := o.b.Attention(att, tokens[0], tokens[1], tokens[2], nil, nil, spec); err != nil {
		o.b.Free(att)
		return nil, fmt.Errorf("%s: %v", a.qkv.qualified, err)
	}
	back, err := o.b.New(c, h, w)
	if err != nil {
		o.b.Free(att)
		return nil, err
	}
	bf, err := o.flat(back)
	if err == nil {
		err = o.b.Transpose(bf, att)
	}
	o.b.Free(att)
	if err != nil {
		o.b.Free(back)
		return nil, err
	}
	out, err := o.same(back, a.proj)
	o.b.Free(back)
	if err != nil {
		return nil, err
	}
	if err := o.b.Add(out, out, x); err != nil {
		o.b.Free(out)
		return nil, err
	}
	return out, nil
}

// midBlock is resnets.0 → attentions.0 → resnets.1 at the narrowest resolution.
type midBlock struct {
	res0, res1 *resBlock
	attn       *attnBlock
}

func loadMidBlock(l *loader, name string, c int) (*midBlock, error) {
	m := &midBlock{}
	var err error
	if m.res0, err = loadResBlock(l, name+".resnets.0", c, c); err != nil {
		return nil, err
	}
	if m.attn, err = loadAttnBlock(l, name+".attentions.0", c); err != nil {
		return nil, err
	}
	if m.res1, err = loadResBlock(l, name+".resnets.1", c, c); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *midBlock) forward(o ops, x ml.Tensor) (ml.Tensor, error) {
	a, err := m.res0.forward(o, x)
	if err != nil {
		return nil, err
	}
	b, err := m.attn.forward(o, a)
	o.b.Free(a)
	if err != nil {
		return nil, err
	}
	c, err := m.res1.forward(o, b)
	o.b.Free(b)
	return c, err
}
