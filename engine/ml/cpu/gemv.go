package cpu

import (
	"encoding/binary"
	"runtime"
	"sync"

	"easel/engine/quant"
)

// One input row through 8-bit weights (the text encoder writing a token): the weights are read
// once, straight from their int8 codes, instead of being dequantized to float32 tiles first — for
// one row the dequantization, not the multiply, would set the pace, and the goal is the memory
// bandwidth. With w[o,i] = q[o,i]·s[o]·c[i] (q8_2f; c = 1 for q8_row),
//
//	y[o] = s[o] · Σ_i q[o,i] · (c[i]·x[i])
//
// the column field is folded into the input once per call, and each row is an int8 × float32 dot
// product (dotQ8: vectorized C on Linux with cgo, Go elsewhere). Each worker copies a block of
// rows from the mapping into its own buffer first, so a fault in the model file (it went away)
// happens in Go, where mmapfile.Group recovers it, never inside C.

// gemvBlockBytes is the size of one worker's copied block of codes (it stays in L2).
const gemvBlockBytes = 64 << 10

// rowLinear reports whether LinearBatch takes the one-row path for these weights.
func rowLinear(n int, ws []*quant.Tensor) bool {
	if n != 1 {
		return false
	}
	for _, w := range ws {
		if w.DType != quant.Q8_2F && w.DType != quant.Q8Row {
			return false
		}
	}
	return true
}

var gemvBuffers = sync.Pool{New: func() any { b := make([]byte, gemvBlockBytes); return &b }}

// linearRow is LinearBatch for one input row over q8_2f / q8_row weights.
func (b *Backend) linearRow(outs []*Tensor, x *Tensor, ws []*quant.Tensor) {
	for i, w := range ws {
		rows, cols := w.Rows(), w.Cols()
		xc := make([]float32, cols)
		copy(xc, x.data[:cols])
		if w.DType == quant.Q8_2F {
			field := w.Data[rows*cols+2*rows:]
			for k := range xc {
				xc[k] *= quant.HalfToFloat32(binary.LittleEndian.Uint16(field[2*k:]))
			}
		}
		scales := w.Data[rows*cols : rows*cols+2*rows]
		y := outs[i].data
		block := max(1, gemvBlockBytes/cols)
		minChunk := max(block, rows/(4*runtime.GOMAXPROCS(0)))
		parallelRows(rows, minChunk, func(lo, hi int) {
			bp := gemvBuffers.Get().(*[]byte)
			defer gemvBuffers.Put(bp)
			buf := *bp
			if len(buf) < block*cols {
				buf = make([]byte, block*cols)
			}
			for r0 := lo; r0 < hi; r0 += block {
				r1 := min(r0+block, hi)
				codes := buf[:(r1-r0)*cols]
				copy(codes, w.Data[r0*cols:r1*cols])
				dst := y[r0:r1]
				dotQ8(codes, xc, dst)
				for k := range dst {
					dst[k] *= quant.HalfToFloat32(binary.LittleEndian.Uint16(scales[2*(r0+k):]))
				}
			}
		})
	}
}

// dotQ8Go is dotQ8 in Go: out[r] = Σ_i int8(codes[r·len(x)+i]) · x[i].
func dotQ8Go(codes []byte, x []float32, out []float32) {
	cols := len(x)
	for r := range out {
		row := codes[r*cols : (r+1)*cols]
		row = row[:len(x)]
		var a0, a1, a2, a3 float32
		i := 0
		for ; i+4 <= len(x); i += 4 {
			a0 += float32(int8(row[i])) * x[i]
			a1 += float32(int8(row[i+1])) * x[i+1]
			a2 += float32(int8(row[i+2])) * x[i+2]
			a3 += float32(int8(row[i+3])) * x[i+3]
		}
		for ; i < len(x); i++ {
			a0 += float32(int8(row[i])) * x[i]
		}
		out[r] = (a0 + a1) + (a2 + a3)
	}
}
