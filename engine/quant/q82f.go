package quant

import (
	"encoding/binary"
	"math"
)

// q8_2f (dtype 9, "two-field"), cmf.md §9.2: int8 weights, an f16 scale per row and an f16
// column field (the RMS of each input column) that absorbs outlier input channels.
//
//	[int8 q : rows*cols][f16 row_scale : rows][f16 col : cols]
//	w[o,i] = (float32(int8(q)) * row_scale[o]) * col[i]

// q8_2fSumBlock is the fixed number of rows whose squares cortiq sums together before adding the
// block totals in index order. f64 addition does not associate, so the grouping is part of the
// format's bit-exact encoder.
const q8_2fSumBlock = 256

// addSquares adds Σ v² over the rows of block (row-major, cols wide) into acc, in f64, row by row.
func addSquares(acc []float64, block []float32, cols int) {
	for r := 0; r+cols <= len(block); r += cols {
		row := block[r : r+cols]
		a := acc[:len(row)]
		for i, v := range row {
			f := float64(v)
			a[i] += float64(f * f) // the conversion forbids fusing into an FMA (arm64), as in cortiq
		}
	}
}

// q8_2fColumnField turns the column sums of squares into the stored column field:
// max(f16(max(sqrt(Σ/rows), 1e-12)), 2^-14).
func q8_2fColumnField(sums []float64, rows int, col []float32) {
	for i, s := range sums {
		rms := float32(math.Max(math.Sqrt(s/float64(rows)), 1e-12))
		col[i] = max32(roundHalf(rms), smallestNormalHalf)
	}
}

// encodeQ8_2FRows quantizes rows r0..r1 (w holds just those rows) against the column field col
// and writes them, their row scales and (when r0 == 0) the column field into payload.
func encodeQ8_2FRows(payload []byte, rows, cols, r0, r1 int, w []float32, col []float32) {
	q := payload[:rows*cols]
	scales := payload[rows*cols : rows*cols+2*rows]
	if r0 == 0 {
		field := payload[rows*cols+2*rows:]
		for i, c := range col {
			binary.LittleEndian.PutUint16(field[2*i:], Float32ToHalf(c))
		}
	}
	col = col[:cols]
	for r := r0; r < r1; r++ {
		src := w[(r-r0)*cols : (r-r0+1)*cols]
		src = src[:len(col)]
		absmax := float32(0)
		for i, c := range col {
			absmax = max32(absmax, abs32(src[i]/c))
		}
		scale := halfScale(max32(absmax, 1e-12) / 127)
		dst := q[r*cols : (r+1)*cols]
		dst = dst[:len(col)]
		for i, c := range col {
			dst[i] = byte(int8(saturate(rne((src[i]/c)/scale), -127, 127)))
		}
		binary.LittleEndian.PutUint16(scales[2*r:], Float32ToHalf(scale))
	}
}

// q8_2fColumnChunk is how many column-field values dequantizeQ8_2F decodes onto the stack at once.
const q8_2fColumnChunk = 512

// dequantizeQ8_2F decodes rows r0..r1 into dst. The column field is decoded a chunk at a time
// into a stack buffer, so a call allocates nothing.
func dequantizeQ8_2F(payload []byte, rows, cols, r0, r1 int, dst []float32) {
	scales := payload[rows*cols : rows*cols+2*rows]
	field := payload[rows*cols+2*rows : rows*cols+2*rows+2*cols]
	var col [q8_2fColumnChunk]float32
	for c0 := 0; c0 < cols; c0 += q8_2fColumnChunk {
		c1 := min(c0+q8_2fColumnChunk, cols)
		cs := col[:c1-c0]
		for i := range cs {
			cs[i] = halfTable[binary.LittleEndian.Uint16(field[2*(c0+i):])]
		}
		for r := r0; r < r1; r++ {
			s := halfTable[binary.LittleEndian.Uint16(scales[2*r:])]
			src := payload[r*cols+c0 : r*cols+c1]
			out := dst[(r-r0)*cols+c0 : (r-r0)*cols+c1]
			src = src[:len(cs)]
			out = out[:len(cs)]
			i := 0
			for ; i+8 <= len(cs); i += 8 {
				x := binary.LittleEndian.Uint64(src[i:])
				o, c := (*[8]float32)(out[i:]), (*[8]float32)(cs[i:])
				o[0] = float32(float32(int8(x))*s) * c[0]
				o[1] = float32(float32(int8(x>>8))*s) * c[1]
				o[2] = float32(float32(int8(x>>16))*s) * c[2]
				o[3] = float32(float32(int8(x>>24))*s) * c[3]
				o[4] = float32(float32(int8(x>>32))*s) * c[4]
				o[5] = float32(float32(int8(x>>40))*s) * c[5]
				o[6] = float32(float32(int8(x>>48))*s) * c[6]
				o[7] = float32(float32(int8(x>>56))*s) * c[7]
			}
			for ; i < len(cs); i++ {
				out[i] = float32(float32(int8(src[i]))*s) * cs[i]
			}
		}
	}
}
