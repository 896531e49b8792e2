package seed

import "math"

// Generator is torch.Generator("cpu") after manual_seed: a Mersenne Twister plus the one cached
// normal sample PyTorch's scalar Box–Muller keeps between calls. It is not safe for concurrent use.
type Generator struct {
	mt mt19937
	// nextNormal is the second Box–Muller value of the last scalar draw, returned by the next one
	// (torch's next_double_normal_sample); valid when hasNextNormal.
	nextNormal    float64
	hasNextNormal bool
}

// NewGenerator is torch.Generator("cpu").manual_seed(seed). Only the low 32 bits of the seed
// reach the engine, as in PyTorch, so seeds that differ only above bit 31 draw the same numbers.
func NewGenerator(seed uint64) *Generator {
	g := &Generator{}
	g.mt.seed(seed)
	return g
}

// random64 is torch's CPUGeneratorImpl::random64: two 32-bit words, the first one high.
func (g *Generator) random64() uint64 {
	hi := g.mt.uint32()
	lo := g.mt.uint32()
	return uint64(hi)<<32 | uint64(lo)
}

// uniformFloat32 is at::uniform_real_distribution<float>(0, 1): the low 24 bits of one word
// over 2²⁴, so a value in [0, 1) that is exact in float32.
func (g *Generator) uniformFloat32() float32 {
	return float32(g.mt.uint32()&(1<<24-1)) * (1.0 / (1 << 24))
}

// uniformFloat64 is at::uniform_real_distribution<double>(0, 1): the low 53 bits of random64
// over 2⁵³.
func (g *Generator) uniformFloat64() float64 {
	return float64(g.random64()&(1<<53-1)) * (1.0 / (1 << 53))
}

// normalFloat64 is at::normal_distribution<double>(0, 1): Box–Muller on two double uniforms,
// returning r·cos θ and keeping r·sin θ for the next call.
func (g *Generator) normalFloat64() float64 {
	if g.hasNextNormal {
		g.hasNextNormal = false
		return g.nextNormal
	}
	u1 := g.uniformFloat64()
	u2 := g.uniformFloat64()
	r := math.Sqrt(-2 * math.Log1p(-u2))
	theta := float64(2*math.Pi) * u1
	g.nextNormal = r * math.Sin(theta)
	g.hasNextNormal = true
	return r * math.Cos(theta)
}
