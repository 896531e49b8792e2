package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Float32s decodes a floating-point tensor (F32, F16, BF16, F64) into a new float32 slice.
func (t *Tensor) Float32s() ([]float32, error) {
	n := t.Elements()
	out := make([]float32, n)
	d := t.Data
	switch t.DType {
	case "F32":
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(d[4*i:]))
		}
	case "BF16":
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(d[2*i:])) << 16)
		}
	case "F16":
		for i := range out {
			out[i] = HalfToFloat32(binary.LittleEndian.Uint16(d[2*i:]))
		}
	case "F64":
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(d[8*i:])))
		}
	default:
		return nil, fmt.Errorf("tensor %q is %s, not a floating-point type", t.Name, t.DType)
	}
	return out, nil
}

// Int64s decodes an integer tensor (I64, I32, U8, BOOL, ...) into int64 values.
func (t *Tensor) Int64s() ([]int64, error) {
	n := t.Elements()
	out := make([]int64, n)
	d := t.Data
	switch t.DType {
	case "I64", "U64":
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(d[8*i:]))
		}
	case "I32":
		for i := range out {
			out[i] = int64(int32(binary.LittleEndian.Uint32(d[4*i:])))
		}
	case "U32":
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint32(d[4*i:]))
		}
	case "I16":
		for i := range out {
			out[i] = int64(int16(binary.LittleEndian.Uint16(d[2*i:])))
		}
	case "U16":
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint16(d[2*i:]))
		}
	case "U8", "BOOL":
		for i := range out {
			out[i] = int64(d[i])
		}
	case "I8":
		for i := range out {
			out[i] = int64(int8(d[i]))
		}
	default:
		return nil, fmt.Errorf("tensor %q is %s, not an integer type", t.Name, t.DType)
	}
	return out, nil
}

// HalfToFloat32 converts IEEE 754 binary16 bits to float32 exactly (subnormals, inf and NaN kept).
func HalfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal half: normalise.
	e := uint32(113)
	for mant&0x400 == 0 {
		mant <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
}
