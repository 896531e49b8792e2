package qwen3vl

import (
	"fmt"
	"math"

	"easel/engine/ml"
)

// GELUErfer is the optional backend op for the exact GELU, 0.5·x·(1 + erf(x/√2)), which the vision
// tower's mergers use (torch nn.GELU()). The op set has only the tanh approximation, so a backend
// may offer this one; without it the encoder computes it on the host.
type GELUErfer interface {
	GELUErf(dst, x ml.Tensor) error
}

// geluErf is dst = GELU(x) with the exact erf form, on the backend when it offers the op.
func geluErf(b ml.Backend, dst, x ml.Tensor) error {
	if g, ok := b.(GELUErfer); ok {
		return g.GELUErf(dst, x)
	}
	v, err := b.Download(x)
	if err != nil {
		return fmt.Errorf("exact GELU: %w", err)
	}
	for i, a := range v {
		v[i] = float32(0.5 * float64(a) * (1 + math.Erf(float64(a)/math.Sqrt2)))
	}
	t, err := b.Upload(v, x.Shape()...)
	if err != nil {
		return fmt.Errorf("exact GELU: %w", err)
	}
	defer b.Free(t)
	return b.Copy(dst, t)
}
