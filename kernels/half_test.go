package kernels_test

import "math"

// halfToFloat64 decodes IEEE binary16 bits exactly (a test-local decoder, independent of
// engine/quant, so references do not share code with the data they check).
func halfToFloat64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 31
	mant := float64(h & 1023)
	switch exp {
	case 0:
		return sign * math.Ldexp(mant, -24)
	case 31:
		if mant == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1024+mant, exp-25)
}

// float64ToHalf rounds to the nearest binary16 (ties to even) for normal and subnormal values;
// used to make test inputs, whose exact values the references then read back.
func float64ToHalf(x float64) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign, x = 0x8000, -x
	}
	if x >= 65520 {
		return sign | 0x7c00
	}
	if x < math.Ldexp(1, -14) { // subnormal: multiples of 2^-24
		return sign | uint16(math.RoundToEven(math.Ldexp(x, 24)))
	}
	frac, exp := math.Frexp(x) // x = frac·2^exp, frac in [0.5, 1)
	m := math.RoundToEven(math.Ldexp(frac, 11))
	if m == 2048 {
		m, exp = 1024, exp+1
	}
	return sign | uint16(exp+14)<<10 | uint16(m-1024)
}
