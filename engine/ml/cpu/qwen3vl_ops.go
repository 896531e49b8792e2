package cpu

import (
	"math"

	"easel/engine/ml"
)

// GELUErf is the exact GELU, dst = 0.5·x·(1 + erf(x/√2)) (torch nn.GELU()), which Qwen3-VL's vision
// mergers use. It is not in the op set: engine/qwen3vl finds it through its optional GELUErfer
// interface and falls back to the host without it. dst may be x. Class ClassAct.
func (b *Backend) GELUErf(dst, x ml.Tensor) error { return b.unary("GELUErf", dst, x, geluErf) }

func geluErf(v float32) float32 {
	x := float64(v)
	return float32(0.5 * x * (1 + math.Erf(x/math.Sqrt2)))
}
