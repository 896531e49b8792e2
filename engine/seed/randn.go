package seed

import "math"

// vectorBlock is the number of values ATen's vectorised normal_fill transforms at once: the
// first 8 uniforms of a block give the radii, the next 8 the angles.
const vectorBlock = 16

// Randn is torch.randn(n, generator=g, dtype=torch.float32) for a contiguous tensor of n values
// (any shape with n elements: randn draws in row-major order).
func (g *Generator) Randn(n int) []float32 {
	out := make([]float32, n)
	g.FillNormal(out)
	return out
}

// FillNormal overwrites dst with standard normal float32 values exactly as torch.randn fills a
// contiguous float32 tensor of len(dst) elements. Tensors of 16 or more values take ATen's
// vectorised path: one uniform per element, then Box–Muller on every block of 16, and when the
// length is not a multiple of 16 the last 16 values are redrawn from 16 fresh uniforms and
// transformed again. Smaller tensors take the scalar path: one double-precision Box–Muller
// sample per element, with the generator's cached second value.
func (g *Generator) FillNormal(dst []float32) {
	n := len(dst)
	if n < vectorBlock {
		for i := range dst {
			dst[i] = float32(g.normalFloat64())
		}
		return
	}
	for i := range dst {
		dst[i] = g.uniformFloat32()
	}
	for i := 0; i+vectorBlock <= n; i += vectorBlock {
		boxMuller16(dst[i : i+vectorBlock])
	}
	if n%vectorBlock != 0 {
		tail := dst[n-vectorBlock:]
		for i := range tail {
			tail[i] = g.uniformFloat32()
		}
		boxMuller16(tail)
	}
}

// twoPi is the kernel's _mm256_set1_ps(2.0f * c10::pi<double>): 2π rounded to float32.
const twoPi = float32(2 * math.Pi)

// boxMuller16 is normal_fill_16_AVX2 on 16 uniforms in [0, 1): lane j pairs u = block[j] and
// v = block[j+8] into r·cos θ (stored at j) and r·sin θ (stored at j+8), with r = √(−2 ln(1 − u))
// and θ = 2π·v, then applies the kernel's fmadd with std 1 and mean 0 (which turns −0 into +0).
func boxMuller16(block []float32) {
	for j := 0; j < vectorBlock/2; j++ {
		u1 := 1 - block[j]
		u2 := block[j+vectorBlock/2]
		radius := float32(math.Sqrt(float64(-2 * logAVX(u1))))
		sin, cos := sinCosAVX(float32(twoPi * u2))
		block[j] = fma32(float32(radius*cos), 1, 0)
		block[j+vectorBlock/2] = fma32(float32(radius*sin), 1, 0)
	}
}
