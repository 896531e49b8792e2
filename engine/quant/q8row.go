package quant

import (
	"encoding/binary"
	"fmt"
)

// q8_row (dtype 3), cmf.md §9.1: one int8 per weight and one f16 scale per row.
//
//	[int8 q : rows*cols, row-major][f16 scale : rows]
//	w[o,i] = float32(int8(q[o*cols+i])) * f16(scale[o])

// encodeQ8RowRows quantizes rows r0..r1 of a [rows, cols] matrix (w holds just those rows) into
// their places in payload. Scale = f16_scale(absmax/127), q = clamp(rne(v/scale), −128, 127).
func encodeQ8RowRows(payload []byte, rows, cols, r0, r1 int, w []float32) {
	q := payload[:rows*cols]
	scales := payload[rows*cols : rows*cols+2*rows]
	for r := r0; r < r1; r++ {
		src := w[(r-r0)*cols : (r-r0+1)*cols]
		absmax := float32(0)
		for _, v := range src {
			absmax = max32(absmax, abs32(v))
		}
		scale := halfScale(absmax / 127)
		dst := q[r*cols : (r+1)*cols]
		for i, v := range src {
			dst[i] = byte(int8(saturate(rne(v/scale), -128, 127)))
		}
		binary.LittleEndian.PutUint16(scales[2*r:], Float32ToHalf(scale))
	}
}

// dequantizeQ8Row decodes rows r0..r1 into dst.
func dequantizeQ8Row(payload []byte, rows, cols, r0, r1 int, dst []float32) {
	scales := payload[rows*cols : rows*cols+2*rows]
	for r := r0; r < r1; r++ {
		s := halfTable[binary.LittleEndian.Uint16(scales[2*r:])]
		src := payload[r*cols : (r+1)*cols]
		out := dst[(r-r0)*cols : (r-r0+1)*cols]
		out = out[:len(src)]
		i := 0
		for ; i+8 <= len(src); i += 8 {
			x := binary.LittleEndian.Uint64(src[i:])
			o := (*[8]float32)(out[i:])
			o[0], o[1] = float32(int8(x))*s, float32(int8(x>>8))*s
			o[2], o[3] = float32(int8(x>>16))*s, float32(int8(x>>24))*s
			o[4], o[5] = float32(int8(x>>32))*s, float32(int8(x>>40))*s
			o[6], o[7] = float32(int8(x>>48))*s, float32(int8(x>>56))*s
		}
		for ; i < len(src); i++ {
			out[i] = float32(int8(src[i])) * s
		}
	}
}

// checkQ8Shape reports whether [rows, cols] suits the int8 codecs.
func checkQ8Shape(d DType, rows, cols int) error {
	if rows <= 0 || cols <= 0 {
		return fmt.Errorf("%v needs a non-empty 2-D shape, got [%d, %d]", d, rows, cols)
	}
	return nil
}
