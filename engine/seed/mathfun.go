package seed

import "math"

// The log, sine and cosine of ATen's AVX2 normal_fill kernel: avx_mathfun.h's log256_ps and
// sincos256_ps (Julien Pommier's Cephes-derived sse_mathfun, ported to AVX), evaluated one lane at
// a time in float32. PyTorch is built with GCC at -ffp-contract=fast and -mfma, which fuses most
// multiply-then-add pairs of these routines into single-rounding FMAs; fma32 marks exactly the
// pairs that were fused, found by matching the reference draws bit for bit. Every other product is
// rounded on its own (the explicit float32 conversions keep Go from fusing them on arm64).

// Cephes logf constants (avx_mathfun.h).
const (
	cephesSqrtHalf = float32(0.707106781186547524)
	cephesLogQ1    = float32(-2.12194440e-4)
	cephesLogQ2    = float32(0.693359375)
)

var cephesLogP = [...]float32{
	7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
	-1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
}

// logAVX is log256_ps for the inputs normal_fill gives it: u in (0, 1], never zero, negative,
// subnormal or NaN (1 − u for a 24-bit uniform u).
func logAVX(x float32) float32 {
	bits := math.Float32bits(x)
	exponent := int32(bits>>23) - 0x7f
	x = math.Float32frombits(bits&^0x7f800000 | math.Float32bits(0.5)) // mantissa in [0.5, 1)
	e := float32(exponent) + 1
	var tmp float32
	if x < cephesSqrtHalf {
		e -= 1
		tmp = x
	}
	x = x - 1 + tmp // (x − 1) + x below √½: 2x − 1
	z := float32(x * x)
	y := cephesLogP[0]
	for _, p := range cephesLogP[1:] {
		y = fma32(y, x, p)
	}
	y = float32(y * x)
	y = fma32(y, z, float32(e*cephesLogQ1))
	y -= float32(z * 0.5)
	x += y
	return fma32(e, cephesLogQ2, x)
}

// Cephes sinf/cosf constants (avx_mathfun.h).
const (
	cephesFourOverPi = float32(1.27323954473516)
	cephesMinusDP1   = float32(-0.78515625)
	cephesMinusDP2   = float32(-2.4187564849853515625e-4)
	cephesMinusDP3   = float32(-3.77489497744594108e-8)
	sinCofP0         = float32(-1.9515295891e-4)
	sinCofP1         = float32(8.3321608736e-3)
	sinCofP2         = float32(-1.6666654611e-1)
	cosCofP0         = float32(2.443315711809948e-005)
	cosCofP1         = float32(-1.388731625493765e-003)
	cosCofP2         = float32(4.166664568298827e-002)
)

// sinCosAVX is sincos256_ps: reduce |x| by the octant j (Cody–Waite with three parts of π/4),
// evaluate the sine and cosine polynomials on [−π/4, π/4], then swap and sign by octant.
func sinCosAVX(x float32) (sin, cos float32) {
	signSin := math.Float32bits(x) & 0x80000000
	x = math.Float32frombits(math.Float32bits(x) &^ 0x80000000)

	j := int32(float32(x * cephesFourOverPi)) // truncation, as cvttps
	j = (j + 1) &^ 1
	y := float32(j)
	signSin ^= uint32(j&4) << 29
	signCos := uint32(^(j-2)&4) << 29
	cosineFirst := j&2 == 0

	x = fma32(y, cephesMinusDP1, x)
	x = fma32(y, cephesMinusDP2, x)
	x = fma32(y, cephesMinusDP3, x)
	z := float32(x * x)

	c := fma32(cosCofP0, z, cosCofP1)
	c = fma32(c, z, cosCofP2)
	c = float32(c * z)
	c = fma32(c, z, -float32(z*0.5))
	c += 1

	s := fma32(sinCofP0, z, sinCofP1)
	s = fma32(s, z, sinCofP2)
	s = float32(s * z)
	s = fma32(s, x, x)

	if !cosineFirst {
		s, c = c, s
	}
	return math.Float32frombits(math.Float32bits(s) ^ signSin), math.Float32frombits(math.Float32bits(c) ^ signCos)
}
