package vae

import (
	"fmt"

	"easel/engine/ml"
)

// ops wraps the backend with the shape arithmetic the layers share. Every helper allocates its
// result and leaves its inputs alone; callers free what they no longer need.
type ops struct {
	b ml.Backend
	// trace, when set, sees the output of every named stage (tests compare them with the
	// reference's per-stage debug case). It must not keep the tensor.
	trace func(stage string, t ml.Tensor)
}

func (o ops) traced(stage string, t ml.Tensor) {
	if o.trace != nil {
		o.trace(stage, t)
	}
}

// chw is the shape of a channel-first activation.
func chw(t ml.Tensor) (c, h, w int) {
	s := t.Shape()
	return s[0], s[1], s[2]
}

// flat is a [C, H·W] view of a [C, H, W] activation (Transpose works on 2-D shapes).
func (o ops) flat(t ml.Tensor) (ml.Tensor, error) {
	c, h, w := chw(t)
	return o.b.Slice(t, 0, c, h*w)
}

// conv applies a convolution with the given stride and padding.
func (o ops) conv(x ml.Tensor, c *conv, spec ml.ConvSpec) (ml.Tensor, error) {
	_, h, w := chw(x)
	oh := (h+spec.PadTop+spec.PadBottom-c.kernel)/spec.Stride + 1
	ow := (w+spec.PadLeft+spec.PadRight-c.kernel)/spec.Stride + 1
	dst, err := o.b.New(c.out, oh, ow)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.qualified, err)
	}
	if err := o.b.Conv2D(dst, x, c.w, c.bias, spec); err != nil {
		o.b.Free(dst)
		return nil, fmt.Errorf("%s: %v", c.qualified, err)
	}
	return dst, nil
}

// same applies a stride-1 convolution with symmetric zero padding (k/2 on every side), as every
// QwenImage21CausalConv3d does for one frame.
func (o ops) same(x ml.Tensor, c *conv) (ml.Tensor, error) {
	return o.conv(x, c, ml.SamePad(c.kernel/2))
}

// normAct is SiLU(channel RMS norm(x)·gamma), the pre-activation of every convolution in a
// residual block and of conv_out.
func (o ops) normAct(x, gamma ml.Tensor) (ml.Tensor, error) {
	n, err := o.channelNorm(x, gamma)
	if err != nil {
		return nil, err
	}
	if err := o.b.SiLU(n, n); err != nil {
		o.b.Free(n)
		return nil, err
	}
	return n, nil
}
