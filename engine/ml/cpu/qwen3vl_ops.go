package cpu

import (
	"math"

	"easel/engine/ml"
)

// GELUErf is the exact GELU, dst = 0.5·x·(1 + erf(x/√2)) (torch nn.GELU()), which Qwen3-VL's vision
// mergers use. dst may be x. Class ClassAct.
func (b *Backend) GELUErf(dst, x ml.Tensor) error { return b.unary("GELUErf", dst, x, geluErf) }

func geluErf(v float32) float32 {
	x := float64(v)
	return float32(0.5 * x * (1 + math.Erf(x/math.Sqrt2)))
}
