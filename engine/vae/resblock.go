package vae

import (
	"fmt"

	"easel/engine/ml"
)

// resBlock is QwenImage21ResidualBlock (spec §8.3): conv2(SiLU(norm2(conv1(SiLU(norm1(x)))))) +
// shortcut(x), where the shortcut is a 1×1 convolution when the width changes.
type resBlock struct {
	norm1, norm2 ml.Tensor
	conv1, conv2 *conv
	shortcut     *conv // nil when in = out
}

func loadResBlock(l *loader, name string, in, out int) (*resBlock, error) {
	r := &resBlock{}
	var err error
	if r.norm1, err = l.vector(name+".norm1.gamma", in); err != nil {
		return nil, err
	}
	if r.conv1, err = l.conv(name+".conv1", in, out, 3); err != nil {
		return nil, err
	}
	if r.norm2, err = l.vector(name+".norm2.gamma", out); err != nil {
		return nil, err
	}
	if r.conv2, err = l.conv(name+".conv2", out, out, 3); err != nil {
		return nil, err
	}
	if in != out {
		if r.shortcut, err = l.conv(name+".conv_shortcut", in, out, 1); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// forward returns the block's output; x is left for the caller to free.
func (r *resBlock) forward(o ops, x ml.Tensor) (ml.Tensor, error) {
	a, err := o.normAct(x, r.norm1)
	if err != nil {
		return nil, err
	}
	h, err := o.same(a, r.conv1)
	o.b.Free(a)
	if err != nil {
		return nil, err
	}
	a, err = o.normAct(h, r.norm2)
	o.b.Free(h)
	if err != nil {
		return nil, err
	}
	out, err := o.same(a, r.conv2)
	o.b.Free(a)
	if err != nil {
		return nil, err
	}
	skip := x
	if r.shortcut != nil {
		if skip, err = o.same(x, r.shortcut); err != nil {
			o.b.Free(out)
			return nil, err
		}
		defer o.b.Free(skip)
	}
	if err := o.b.Add(out, out, skip); err != nil {
		o.b.Free(out)
		return nil, fmt.Errorf("residual add of %s: %v", r.conv2.qualified, err)
	}
	return out, nil
}

// runResBlocks runs x through blocks in order, freeing each intermediate (never x itself); with no
// blocks it returns x.
func runResBlocks(o ops, x ml.Tensor, blocks []*resBlock) (ml.Tensor, error) {
	h := x
	for _, r := range blocks {
		next, err := r.forward(o, h)
		if h != x {
			o.b.Free(h)
		}
		if err != nil {
			return nil, err
		}
		h = next
	}
	return h, nil
}
