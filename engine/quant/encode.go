package quant

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime"

	"easel/engine/mmapfile"
)

// RowSource fills dst with rows r0..r1 of the matrix being encoded, row-major, (r1−r0)·cols
// values. It may be called more than once for the same rows (q8_2f reads the matrix twice), and
// an error it returns (a read failure, a cancelled context) stops the encoding.
type RowSource func(r0, r1 int, dst []float32) error

// encodeBlockRows is how many rows one worker encodes at a time. It equals the q8_2f summation
// block, so each worker's column sums are exactly one of cortiq's blocks.
const encodeBlockRows = q8_2fSumBlock

// Encode quantizes a row-major float32 tensor of the given shape (viewed as [shape[0], rest]) into
// a payload of dtype d: f32, f16, bf16, q8_row, q8_2f or q4tp. The bytes are those cortiq's
// encoders produce.
func Encode(d DType, shape []int, w []float32) ([]byte, error) {
	size, err := encodedSize(d, shape)
	if err != nil {
		return nil, err
	}
	rows, cols := viewAs2D(shape)
	if len(w) != rows*cols {
		return nil, fmt.Errorf("encode %v %v: %d values given, the shape holds %d", d, shape, len(w), rows*cols)
	}
	payload := make([]byte, size)
	src := func(r0, r1 int, dst []float32) error {
		copy(dst, w[r0*cols:r1*cols])
		return nil
	}
	if err := EncodeFrom(d, shape, src, payload); err != nil {
		return nil, err
	}
	return payload, nil
}

// EncodeFrom encodes a tensor read block by block from src into payload, which must be exactly
// PayloadSize(d, shape) bytes. Memory beyond payload is a few blocks of 256 rows per core, so a
// tensor never has to exist in float32 as a whole. Blocks are encoded on all cores; the bytes do
// not depend on their number.
func EncodeFrom(d DType, shape []int, src RowSource, payload []byte) error {
	size, err := encodedSize(d, shape)
	if err != nil {
		return err
	}
	if int64(len(payload)) != size {
		return fmt.Errorf("encode %v %v: payload buffer is %d bytes, the codec needs %d", d, shape, len(payload), size)
	}
	rows, cols := viewAs2D(shape)
	perRow, _ := planes(d, cols)
	trailer, err := encodeChunks(d, rows, cols, src, func(c0, c1 int, chunk []byte) error {
		whole, local := 0, 0
		for _, b := range perRow {
			copy(payload[whole+c0*b:whole+c1*b], chunk[local:local+(c1-c0)*b])
			whole += rows * b
			local += (c1 - c0) * b
		}
		return nil
	})
	if err != nil {
		return err
	}
	copy(payload[len(payload)-len(trailer):], trailer)
	return nil
}

// EncodeTo streams the payload of a tensor read block by block from src to w, in order, without
// ever holding it whole: the first (large) plane of each block is written as soon as it is
// encoded; the small per-row side planes (scales, q4tp's params and codes: at most a few bytes
// per row) are kept and written after it. Exactly PayloadSize(d, shape) bytes are written, the
// same bytes Encode returns.
func EncodeTo(w io.Writer, d DType, shape []int, src RowSource) error {
	if _, err := encodedSize(d, shape); err != nil {
		return err
	}
	rows, cols := viewAs2D(shape)
	perRow, _ := planes(d, cols)
	side := make([][]byte, len(perRow))
	for i := 1; i < len(perRow); i++ {
		side[i] = make([]byte, 0, rows*perRow[i])
	}
	trailer, err := encodeChunks(d, rows, cols, src, func(c0, c1 int, chunk []byte) error {
		n := c1 - c0
		if _, err := w.Write(chunk[:n*perRow[0]]); err != nil {
			return err
		}
		local := n * perRow[0]
		for i := 1; i < len(perRow); i++ {
			side[i] = append(side[i], chunk[local:local+n*perRow[i]]...)
			local += n * perRow[i]
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range append(side[1:], trailer) {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// planes describes a codec's payload as row-major planes: each plane holds perRow[i] bytes for
// every row, the planes follow each other, and trailer bytes (q8_2f's column field) end it.
func planes(d DType, cols int) (perRow []int, trailer int) {
	switch d {
	case F32:
		return []int{4 * cols}, 0
	case F16, BF16:
		return []int{2 * cols}, 0
	case Q8Row:
		return []int{cols, 2}, 0
	case Q8_2F:
		return []int{cols, 2}, 2 * cols
	case Q4TP:
		l := newQ4TPLayout(1, cols)
		return []int{l.tilesPerRow * q4tpTileBytes, 4, l.codeStride}, 0
	}
	return nil, 0
}

// encodeChunks encodes the tensor a chunk of rows at a time (a 256-row block per core), each chunk
// laid out as a payload of its own rows, and hands it to emit, which must be done with it when it
// returns. It returns the trailer (q8_2f's column field).
func encodeChunks(d DType, rows, cols int, src RowSource, emit func(c0, c1 int, chunk []byte) error) ([]byte, error) {
	workers := max(1, min(runtime.GOMAXPROCS(0), (rows+encodeBlockRows-1)/encodeBlockRows))
	chunkRows := min(workers*encodeBlockRows, rows)
	buf := make([]float32, chunkRows*cols)
	chunkSize, _ := PayloadSize(d, []int{chunkRows, cols})
	out := make([]byte, chunkSize)

	var col []float32
	var trailer []byte
	if d == Q8_2F {
		var err error
		if col, err = q8_2fColumns(src, rows, cols, workers, buf); err != nil {
			return nil, err
		}
		trailer = make([]byte, 2*cols)
		for i, c := range col {
			binary.LittleEndian.PutUint16(trailer[2*i:], Float32ToHalf(c))
		}
	}
	scratch := make([]q4tpScratch, workers)
	for c0 := 0; c0 < rows; c0 += chunkRows {
		c1 := min(c0+chunkRows, rows)
		n := c1 - c0
		chunk := buf[:n*cols]
		if err := src(c0, c1, chunk); err != nil {
			return nil, err
		}
		size, _ := PayloadSize(d, []int{n, cols})
		payload := out[:size]
		// Rows are numbered within the chunk: the chunk is encoded as a tensor of n rows.
		parallelBlocks(0, n, func(worker, r0, r1 int) {
			w := chunk[r0*cols : r1*cols]
			switch d {
			case F32, F16, BF16:
				encodeFloatRows(d, payload, cols, r0, w)
			case Q8Row:
				encodeQ8RowRows(payload, n, cols, r0, r1, w)
			case Q8_2F:
				encodeQ8_2FRows(payload, n, cols, r0, r1, w, col)
			case Q4TP:
				encodeQ4TPRows(payload, n, cols, r0, r1, w, &scratch[worker])
			}
		})
		if err := emit(c0, c1, payload); err != nil {
			return nil, err
		}
	}
	return trailer, nil
}

// q8_2fColumns is the first q8_2f pass: the column field from per-256-row f64 sums of squares,
// the block totals added in block order.
func q8_2fColumns(src RowSource, rows, cols, workers int, buf []float32) ([]float32, error) {
	total := make([]float64, cols)
	partial := make([][]float64, workers)
	for i := range partial {
		partial[i] = make([]float64, cols)
	}
	chunkRows := workers * encodeBlockRows
	for c0 := 0; c0 < rows; c0 += chunkRows {
		c1 := min(c0+chunkRows, rows)
		chunk := buf[:(c1-c0)*cols]
		if err := src(c0, c1, chunk); err != nil {
			return nil, err
		}
		parallelBlocks(c0, c1, func(worker, r0, r1 int) {
			clear(partial[worker])
			addSquares(partial[worker], chunk[(r0-c0)*cols:(r1-c0)*cols], cols)
		})
		for b := 0; b < (c1-c0+encodeBlockRows-1)/encodeBlockRows; b++ {
			for i, s := range partial[b] {
				total[i] += s
			}
		}
	}
	col := make([]float32, cols)
	q8_2fColumnField(total, rows, col)
	return col, nil
}

// parallelBlocks runs fn on each block of encodeBlockRows rows of [c0, c1), one goroutine per
// block; worker is the block's index within the chunk.
func parallelBlocks(c0, c1 int, fn func(worker, r0, r1 int)) {
	n := (c1 - c0 + encodeBlockRows - 1) / encodeBlockRows
	if n == 1 {
		fn(0, c0, c1)
		return
	}
	var g mmapfile.Group // a panic in a block comes back to the caller
	for b := range n {
		r0 := c0 + b*encodeBlockRows
		r1 := min(r0+encodeBlockRows, c1)
		g.Go(func() { fn(b, r0, r1) })
	}
	g.Wait()
}

// viewAs2D is the [rows, cols] view of a shape: the first dimension against the rest.
func viewAs2D(shape []int) (rows, cols int) {
	t := Tensor{Shape: shape}
	return t.Rows(), t.Cols()
}

// encodedSize checks that d is a codec Easel encodes and suits the shape, and returns the payload
// size.
func encodedSize(d DType, shape []int) (int64, error) {
	switch d {
	case F32, F16, BF16, Q8Row, Q8_2F, Q4TP:
	default:
		return 0, fmt.Errorf("encode %v: Easel encodes only f32, f16, bf16, q8_row, q8_2f and q4tp", d)
	}
	size, ok := PayloadSize(d, shape)
	if !ok {
		return 0, shapeError(d, shape)
	}
	if d == Q8Row || d == Q8_2F {
		if err := checkQ8Shape(d, shape[0], shape[1]); err != nil {
			return 0, err
		}
	}
	return size, nil
}

// shapeError explains why a shape does not suit a codec.
func shapeError(d DType, shape []int) error {
	switch {
	case (d == Q4TP || d == Q2TP) && len(shape) == 2 && shape[1]%GroupSize != 0:
		return fmt.Errorf("%v needs the column count to be a multiple of %d, shape %v has %d; use q8_2f or bf16 for this tensor", d, GroupSize, shape, shape[1])
	case (d == Q4TP || d == Q2TP || d == Q8Row || d == Q8_2F) && len(shape) == 2:
		return fmt.Errorf("%v needs a non-empty shape, got %v", d, shape)
	case d == Q4TP || d == Q2TP || d == Q8Row || d == Q8_2F:
		return fmt.Errorf("%v is a 2-D codec, shape %v is %d-D", d, shape, len(shape))
	}
	return fmt.Errorf("the size of a %v payload of shape %v is not defined", d, shape)
}
