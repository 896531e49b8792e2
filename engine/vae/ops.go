package vae

import (
	"fmt"

	"easel/engine/ml"
)

// The forward pass is written on an ml.Scope (a sticky error, tensors it owns). Every layer is a
// step: it returns a new activation owned by the scope, or nil once the scope has failed, and
// leaves its input alone. The activations are large and each is needed only until the next one
// exists, so chain drops every intermediate as soon as the step after it has made its output
// (e.Free), and the layers drop their scratch the same way: at most two of a chain's activations
// are alive at once, which is what the plans (plan.go) count. Whatever is still owned when an op
// fails is freed by the scope's Release.
type step func(e *ml.Scope, x ml.Tensor) ml.Tensor

// chain runs x through steps in order, dropping each intermediate once the next exists; x itself
// stays the caller's. With no steps it returns x.
func chain(e *ml.Scope, x ml.Tensor, steps ...step) ml.Tensor {
	h := x
	for _, s := range steps {
		next := s(e, h)
		if h != x {
			e.Free(h)
		}
		h = next
	}
	return h
}

// stage is one named stage of a network; the names are the reference modules' (debug cases).
type stage struct {
	name string
	run  step
}

// runStages is chain over named stages: it shows each stage's output to the model's trace and stops
// at the first failure, naming its stage.
func (m *Model) runStages(e *ml.Scope, x ml.Tensor, stages []stage) (ml.Tensor, error) {
	h := x
	for _, s := range stages {
		next := s.run(e, h)
		if h != x {
			e.Free(h)
		}
		if err := e.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		if m.trace != nil {
			m.trace(s.name, next)
		}
		h = next
	}
	return h, nil
}

// chw is the shape of a channel-first activation.
func chw(t ml.Tensor) (c, h, w int) {
	s := t.Shape()
	return s[0], s[1], s[2]
}

// flat is a [C, H·W] view of a [C, H, W] activation (Transpose works on 2-D shapes).
func flat(e *ml.Scope, t ml.Tensor) ml.Tensor {
	if e.Err() != nil {
		return nil
	}
	c, h, w := chw(t)
	return e.Slice(t, 0, c, h*w)
}

// apply is the convolution with the given stride and padding.
func (c *conv) apply(e *ml.Scope, x ml.Tensor, spec ml.ConvSpec) ml.Tensor {
	if e.Err() != nil {
		return nil
	}
	_, h, w := chw(x)
	k := c.W.Shape[2]
	dst := e.Temp(c.W.Shape[0], (h+spec.PadTop+spec.PadBottom-k)/spec.Stride+1, (w+spec.PadLeft+spec.PadRight-k)/spec.Stride+1)
	if err := e.B.Conv2D(dst, x, c.W, c.Bias, spec); err != nil {
		e.Do(fmt.Errorf("%s: %w", c.name(), err))
	}
	return dst
}

// same is the stride-1 convolution with symmetric zero padding (k/2 on every side), as every
// QwenImage21CausalConv3d does for one frame.
func (c *conv) same(e *ml.Scope, x ml.Tensor) ml.Tensor {
	return c.apply(e, x, ml.SamePad(c.W.Shape[2]/2))
}
