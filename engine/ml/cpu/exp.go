package cpu

import "math"

// exp32 is e^x in float32 arithmetic for x ≤ 0 (softmax after the row maximum is subtracted):
// Cephes' expf — range reduction by ln 2 in two parts and a degree-6 polynomial — accurate to a
// couple of float32 ulps, several times faster than math.Exp. Below −87.3 it returns 0.
func exp32(x float32) float32 {
	if x < -87.33654 {
		return 0
	}
	const (
		log2e = 1.44269504088896341
		c1    = 0.693359375
		c2    = -2.12194440e-4
	)
	fx := float32(math.Floor(float64(x*log2e + 0.5)))
	x -= fx * c1
	x -= fx * c2
	z := x * x
	y := ((((1.9875691500e-4*x+1.3981999507e-3)*x+8.3334519073e-3)*x+4.1665795894e-2)*x+1.6666665459e-1)*x + 5.0000001201e-1
	y = y*z + x + 1
	return y * math.Float32frombits(uint32(int32(fx)+127)<<23)
}
