package quant

import "math"

// Scalar conversions between float32 and the two 16-bit float formats, as cortiq performs them
// (cmf.md §9.0). The encoders depend on the exact rounding of Float32ToHalf to produce
// byte-identical payloads; the decoders on nothing but IEEE semantics.

// smallestNormalHalf is the smallest positive normal binary16 value, 2^-14. Every scale a codec
// stores is floored at it so that no scale decodes as a subnormal or zero.
const smallestNormalHalf float32 = 6.1035156e-5

// halfTable maps every binary16 bit pattern to its float32 value; decoding a half is one load.
var halfTable = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = halfToFloat32Slow(uint16(h))
	}
	return &t
}()

// HalfToFloat32 decodes an IEEE binary16 value exactly, subnormals, infinities and NaNs included.
func HalfToFloat32(h uint16) float32 { return halfTable[h] }

func halfToFloat32Slow(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: shift the leading one up to bit 10; each shift lowers the exponent by one.
	e := uint32(0)
	for mant&0x400 == 0 {
		mant <<= 1
		e++
	}
	return math.Float32frombits(sign | (113-e)<<23 | (mant&0x3ff)<<13)
}

// Float32ToHalf rounds a float32 to binary16 the way cortiq's writer does: round-to-nearest-even
// on the normal path, ±Inf on overflow, ±0 below 2^-25, NaN as 0x7E00 with the sign kept, and
// — cortiq's quirk — round-half-up without a sticky bit on the subnormal path.
func Float32ToHalf(x float32) uint16 {
	bits := math.Float32bits(x)
	sign := uint16(bits>>16) & 0x8000
	exp := int32(bits>>23) & 0xff
	mant := bits & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	exp -= 127 - 15
	if exp >= 0x1f {
		return sign | 0x7c00
	}
	if exp <= 0 {
		if exp < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint32(14 - exp)
		half := m >> shift
		round := (m >> (shift - 1)) & 1
		return sign | uint16(half+round)
	}
	half := uint32(exp)<<10 | mant>>13
	round := (mant >> 12) & 1
	sticky := uint32(0)
	if mant&0xfff != 0 {
		sticky = 1
	}
	bump := round & (sticky | half&1)
	return sign | uint16(half+bump)
}

// BFloat16ToFloat32 decodes a bfloat16 value: its bits are the top half of a float32.
func BFloat16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// Float32ToBFloat16 rounds a float32 to bfloat16 as cortiq's packers do:
// (bits + 0x7FFF + lsb) >> 16, round-to-nearest-even with wrap-around arithmetic.
func Float32ToBFloat16(x float32) uint16 {
	bits := math.Float32bits(x)
	return uint16((bits + 0x7fff + (bits>>16)&1) >> 16)
}

// roundHalf is x rounded to binary16 precision and back.
func roundHalf(x float32) float32 { return halfTable[Float32ToHalf(x)] }

// halfScale is cortiq's f16_scale: the scale rounded to binary16 and floored at the smallest
// normal half, so that the value used to quantize is exactly the value the decoder will read.
func halfScale(x float32) float32 { return max32(roundHalf(x), smallestNormalHalf) }

// max32 is Rust's f32::max: when one operand is NaN, the other is returned.
func max32(a, b float32) float32 {
	if a != a || b > a {
		return b
	}
	return a
}

// min32 is Rust's f32::min: when one operand is NaN, the other is returned.
func min32(a, b float32) float32 {
	if a != a || b < a {
		return b
	}
	return a
}

// clamp32 limits x to [lo, hi]; NaN stays NaN, as in Rust's f32::clamp.
func clamp32(x, lo, hi float32) float32 {
	if x < lo {
		return lo
	}
	if x > hi {
		return hi
	}
	return x
}

// rne rounds to the nearest integer, ties to even (Rust's round_ties_even).
func rne(x float32) float32 { return float32(math.RoundToEven(float64(x))) }

// abs32 is |x| for a float32.
func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// saturate clamps an already rounded value to [lo, hi] and converts it to an integer the way Rust's
// `clamp(..) as i8` does: NaN becomes 0.
func saturate(x, lo, hi float32) int32 {
	if x != x {
		return 0
	}
	return int32(clamp32(x, lo, hi))
}
