package quant

import (
	"encoding/binary"
	"math"
)

// The unquantized codecs: f32 (dtype 0), f16 (1) and bf16 (2), little-endian, any shape.

// encodeFloatRows writes the elements of rows r0..r1 (w holds just those rows) of an f32, f16 or
// bf16 tensor into their places in payload.
func encodeFloatRows(d DType, payload []byte, cols, r0 int, w []float32) {
	switch d {
	case F32:
		out := payload[4*r0*cols : 4*(r0*cols+len(w))]
		for i, v := range w {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
		}
	case F16:
		out := payload[2*r0*cols : 2*(r0*cols+len(w))]
		for i, v := range w {
			binary.LittleEndian.PutUint16(out[2*i:], Float32ToHalf(v))
		}
	case BF16:
		out := payload[2*r0*cols : 2*(r0*cols+len(w))]
		for i, v := range w {
			binary.LittleEndian.PutUint16(out[2*i:], Float32ToBFloat16(v))
		}
	}
}

// dequantizeFloat decodes elements e0..e0+len(dst) of an f32, f16 or bf16 payload.
func dequantizeFloat(d DType, payload []byte, e0 int, dst []float32) {
	switch d {
	case F32:
		src := payload[4*e0 : 4*(e0+len(dst))]
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case F16:
		src := payload[2*e0 : 2*(e0+len(dst))]
		i := 0
		for ; i+4 <= len(dst); i += 4 {
			x := binary.LittleEndian.Uint64(src[2*i:])
			o := (*[4]float32)(dst[i:])
			o[0], o[1] = halfTable[uint16(x)], halfTable[uint16(x>>16)]
			o[2], o[3] = halfTable[uint16(x>>32)], halfTable[uint16(x>>48)]
		}
		for ; i < len(dst); i++ {
			dst[i] = halfTable[binary.LittleEndian.Uint16(src[2*i:])]
		}
	case BF16:
		src := payload[2*e0 : 2*(e0+len(dst))]
		i := 0
		for ; i+4 <= len(dst); i += 4 {
			x := binary.LittleEndian.Uint64(src[2*i:])
			o := (*[4]float32)(dst[i:])
			o[0], o[1] = math.Float32frombits(uint32(x)<<16), math.Float32frombits(uint32(x>>16)<<16)
			o[2], o[3] = math.Float32frombits(uint32(x>>32)<<16), math.Float32frombits(uint32(x>>48)<<16)
		}
		for ; i < len(dst); i++ {
			dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16)
		}
	}
}
