package cpu

import "math"

// exp32 is e^x in float32 arithmetic for x ≤ 0 only (softmax after the row maximum is subtracted,
// SiLU's negative side): Cephes' expf polynomial after an exact range reduction by ln 2 (done in
// float64), accurate to a couple of float32 ulps and small enough to inline. Arguments below
// −87.3 are clamped there (e^−87.3 ≈ 1.2e-38).
func exp32(x float32) float32 {
	x = max(x, -87.3)
	i := int32(x*1.44269504088896341 - 0.5) // round x·log2(e) ≤ 0 to the nearest integer
	r := float32(float64(x) - float64(i)*0.693147180559945309)
	y := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	y = y*r*r + r + 1
	return y * math.Float32frombits(uint32(i+127)<<23)
}
