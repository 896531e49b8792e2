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
	if n, err := r.s.file.ReadAt(b, off); err != nil {
		if err == io.EOF {
			return shrunk(r.s, r.t, off+int64(n)-r.s.offsets[r.t.Name])
		}
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
	s     *shard
	t     *safetensors.Tensor
	read  int64
	meter *meter
}

func (r *rawReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := r.r.Read(p)
	r.read += int64(n)
	r.meter.add(int64(n))
	if err == io.EOF && r.read < r.r.Size() {
		err = shrunk(r.s, r.t, r.read)
	}
	return n, err
}

func newRawReader(ctx context.Context, s *shard, t *safetensors.Tensor, m *meter) *rawReader {
	return &rawReader{ctx: ctx, r: io.NewSectionReader(s.file, s.offsets[t.Name], int64(len(t.Data))), s: s, t: t, meter: m}
}

// shrunk is the error for a shard file that ended inside a tensor its header (read when the
// conversion started) says it holds in full: the file changed, or its drive went away, meanwhile.
func shrunk(s *shard, t *safetensors.Tensor, got int64) error {
	return fmt.Errorf("the snapshot file %s ended %d bytes into tensor %q, which its header says holds %d: the file changed or its drive went away during the conversion; reconnect the drive (or download the snapshot again), then convert again",
		s.file.Name(), got, t.Name, len(t.Data))
}
