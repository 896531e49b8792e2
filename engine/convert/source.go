package convert

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"easel/engine/quant"
	"easel/engine/safetensors"
)

// Reading source tensors from their shard files with ReadAt: rows converted to float32 for the
// encoders, or the raw bytes streamed into the writer. Every read checks for cancellation and
// reports its bytes to the progress meter.

// rowReader serves one tensor's rows as float32, reusing its byte buffer across calls.
type rowReader struct {
	ctx   context.Context
	s     *shard
	t     *safetensors.Tensor
	cols  int
	meter *meter
	buf   []byte
}

// rows is a quant.RowSource.
func (r *rowReader) rows(r0, r1 int, dst []float32) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	size, _ := safetensors.DTypeSize(r.t.DType)
	n := (r1 - r0) * r.cols
	if cap(r.buf) < n*size {
		r.buf = make([]byte, n*size)
	}
	b := r.buf[:n*size]
	off := r.s.offsets[r.t.Name] + int64(r0*r.cols*size)
	if _, err := r.s.file.ReadAt(b, off); err != nil {
		return fmt.Errorf("%s: reading tensor %q: %v", r.s.rel, r.t.Name, err)
	}
	dst = dst[:n]
	switch r.t.DType {
	case "BF16":
		for i := range dst {
			dst[i] = quant.BFloat16ToFloat32(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case "F16":
		for i := range dst {
			dst[i] = quant.HalfToFloat32(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case "F32":
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	default:
		return fmt.Errorf("%s: tensor %q is %s, which Easel cannot convert", r.s.rel, r.t.Name, r.t.DType)
	}
	r.meter.add(int64(len(b)))
	return nil
}

// rawReader streams a tensor's bytes unchanged.
type rawReader struct {
	ctx   context.Context
	r     *io.SectionReader
	meter *meter
}

func (r *rawReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := r.r.Read(p)
	r.meter.add(int64(n))
	return n, err
}

func newRawReader(ctx context.Context, s *shard, t *safetensors.Tensor, m *meter) *rawReader {
	return &rawReader{ctx: ctx, r: io.NewSectionReader(s.file, s.offsets[t.Name], int64(len(t.Data))), meter: m}
}
