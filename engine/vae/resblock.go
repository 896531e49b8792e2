package vae

import "easel/engine/ml"

// resBlock is QwenImage21ResidualBlock (spec §8.3): conv2(SiLU(norm2(conv1(SiLU(norm1(x)))))) +
// shortcut(x), where the shortcut is a 1×1 convolution when the width changes.
type resBlock struct {
	Norm1    rmsNorm `weight:"norm1"`
	Conv1    conv    `weight:"conv1"`
	Norm2    rmsNorm `weight:"norm2"`
	Conv2    conv    `weight:"conv2"`
	Shortcut *conv   `weight:"conv_shortcut"` // nil when in = out
}

// forward is the block's output.
func (r *resBlock) forward(e *ml.Scope, x ml.Tensor) ml.Tensor {
	out := chain(e, x, r.Norm1.act, r.Conv1.same, r.Norm2.act, r.Conv2.same)
	skip := x
	if r.Shortcut != nil {
		skip = r.Shortcut.same(e, x)
		defer e.Free(skip)
	}
	e.Do(e.B.Add(out, out, skip))
	return out
}

// resnets runs x through blocks in order.
func resnets(blocks []resBlock) []step {
	steps := make([]step, len(blocks))
	for i := range blocks {
		steps[i] = blocks[i].forward
	}
	return steps
}
