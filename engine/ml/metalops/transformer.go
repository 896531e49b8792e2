package metalops

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"easel/engine/ml"
	"easel/engine/quant"
	"easel/kernels"
	"easel/kernels/device"
)

// linearWeight is where ops_linear reads one weight: half [out, in], or int8 codes with the row
// scale and column field as float (q8).
type linearWeight struct {
	buf      device.Buffer
	off      int
	q8       bool
	side     device.Buffer // q8: rs[out] then col[in], float
	rows, in int
}

// linearWeightOf places w for ops_linear: q8_2f / q8_row codes in the arena (or copied when not
// there) with a float side buffer; f16 in the arena; any other codec converted to half.
func (b *Backend) linearWeightOf(w *quant.Tensor) (linearWeight, error) {
	rows, cols := w.Rows(), w.Cols()
	key := uintptr(unsafe.Pointer(unsafe.SliceData(w.Data)))
	if lw, ok := b.linear[key]; ok {
		return lw, nil
	}
	q := rows * cols
	var rs, col []byte
	switch {
	case w.DType == quant.Q8_2F && len(w.Data) == q+2*rows+2*cols:
		rs, col = w.Data[q:q+2*rows], w.Data[q+2*rows:]
	case w.DType == quant.Q8Row && len(w.Data) == q+2*rows:
		rs = w.Data[q:]
	default:
		buf, off, err := b.weight(w)
		if err != nil {
			return linearWeight{}, err
		}
		return linearWeight{buf: buf, off: off, rows: rows, in: cols}, nil
	}
	lw := linearWeight{q8: true, rows: rows, in: cols}
	side, err := b.dev.NewBuffer(4 * (rows + cols))
	if err != nil {
		return linearWeight{}, fmt.Errorf("metalops: the scales of %s: %w", w.Name, err)
	}
	f := device.View[float32](side)
	for i := 0; i < rows; i++ {
		f[i] = quant.HalfToFloat32(binary.LittleEndian.Uint16(rs[2*i:]))
	}
	for i := 0; i < cols; i++ {
		f[rows+i] = 1
		if col != nil {
			f[rows+i] = quant.HalfToFloat32(binary.LittleEndian.Uint16(col[2*i:]))
		}
	}
	lw.side = side
	b.weightBytes += int64(side.Len())
	if b.arena != nil {
		if buf, off, ok := b.arena.Bind(w.Data); ok {
			lw.buf, lw.off = buf, off
		}
	}
	if lw.buf == nil {
		codes, err := b.dev.NewBuffer(max(q, 4))
		if err != nil {
			side.Release()
			return linearWeight{}, fmt.Errorf("metalops: the codes of %s: %w", w.Name, err)
		}
		copy(codes.Bytes(), w.Data[:q])
		b.weightBytes += int64(codes.Len())
		b.extra = append(b.extra, codes)
		lw.buf = codes
	}
	b.extra = append(b.extra, side)
	b.linear[key] = lw
	return lw, nil
}

// Linear is dst[n, out] = x[n, in] · wᵀ.
func (b *Backend) Linear(dst, x ml.Tensor, w *quant.Tensor) error {
	const op = "Linear"
	d, err := b.own(op, dst)
	if err != nil {
		return err
	}
	a, err := b.own(op, x)
	if err != nil {
		return err
	}
	if w == nil {
		return fmt.Errorf("metalops %s: no weight", op)
	}
	out, in := w.Rows(), w.Cols()
	if lastDim(a) != in || lastDim(d) != out || a.n()/in != d.n()/out {
		return fmt.Errorf("metalops %s: x %v · %s %v into %v: shapes do not match", op, a.shape, w.Name, w.Shape, d.shape)
	}
	lw, err := b.linearWeightOf(w)
	if err != nil {
		return err
	}
	n := a.n() / in
	if err := b.guard(a, ml.ClassGemm); err != nil {
		return err
	}
	prm := kernels.LinearParams{N: uint32(n), Out: uint32(out), In: uint32(in), Ldx: uint32(in), Ldy: uint32(out), Guard: 1}
	if lw.q8 {
		prm.Q8 = 1
	}
	g, t := kernels.LinearGrid(n, out)
	b.flops = 2 * float64(n) * float64(out) * float64(in)
	return dispatch(b, b.pipes.linear, ml.ClassGemm, &prm, g, t, func(enc device.Encoder) int {
		enc.SetBuffer(lw.buf, lw.off, 0)
		a.bind(enc, 1)
		d.bind(enc, 2)
		if lw.q8 {
			enc.SetBuffer(lw.side, 4*lw.rows, 3)
			enc.SetBuffer(lw.side, 0, 4)
		} else {
			a.bind(enc, 3)
			a.bind(enc, 4)
		}
		b.amaxSlot.bind(enc, 6)
		return 5
	})
}

// LinearBatch runs several weights over the same input.
func (b *Backend) LinearBatch(dst []ml.Tensor, x ml.Tensor, w []*quant.Tensor) error {
	if len(dst) != len(w) {
		return fmt.Errorf("metalops LinearBatch: %d outputs for %d weights", len(dst), len(w))
	}
	for i := range w {
		if err := b.Linear(dst[i], x, w[i]); err != nil {
			return err
		}
	}
	return nil
}

// rowNorm encodes ops_rownorm.
func (b *Backend) rowNorm(op string, dst, x, w, bias ml.Tensor, prm kernels.RowNormParams) error {
	d, err := b.own(op, dst)
	if err != nil {
		return err
	}
	a, err := b.own(op, x)
	if err != nil {
		return err
	}
	cols := lastDim(a)
	if d.n() != a.n() || cols == 0 {
		return fmt.Errorf("metalops %s: %v into %v", op, a.shape, d.shape)
	}
	var wt, bt *tensor
	if w != nil {
		if wt, err = b.own(op+" weight", w); err != nil {
			return err
		}
		if wt.n() != cols {
			return fmt.Errorf("metalops %s: weight of %d values for rows of %d", op, wt.n(), cols)
		}
		prm.HasW = 1
	}
	if bias != nil {
		if bt, err = b.own(op+" bias", bias); err != nil {
			return err
		}
		if bt.n() != cols {
			return fmt.Errorf("metalops %s: bias of %d values for rows of %d", op, bt.n(), cols)
		}
		prm.HasB = 1
	}
	prm.Cols = uint32(cols)
	g, t := kernels.RowGrid(a.n() / cols)
	return dispatch(b, b.pipes.rownorm, ml.ClassNorm, &prm, g, t, func(enc device.Encoder) int {
		a.bind(enc, 0)
		for i, o := range []*tensor{wt, bt} {
			if o != nil {
				o.bind(enc, 1+i)
			} else {
				a.bind(enc, 1+i)
			}
		}
		d.bind(enc, 3)
		return 4
	})
}

// RMSNorm is dst = x / sqrt(mean(x²) + eps) · w (or · (w + 1) when zeroCentred) per row.
func (b *Backend) RMSNorm(dst, x, w ml.Tensor, eps float32, zeroCentred bool) error {
	prm := kernels.RowNormParams{Mode: 0, Eps: eps}
	if zeroCentred {
		prm.ZeroCentred = 1
	}
	return b.rowNorm("RMSNorm", dst, x, w, nil, prm)
}

// LayerNorm is dst = (x − mean) / sqrt(var + eps) · w + b per row.
func (b *Backend) LayerNorm(dst, x, w, bias ml.Tensor, eps float32) error {
	return b.rowNorm("LayerNorm", dst, x, w, bias, kernels.RowNormParams{Mode: 1, Eps: eps})
}

// HeadNormRoPE RMS-normalizes each head of x with w, then rotates it by rope, in place.
func (b *Backend) HeadNormRoPE(x ml.Tensor, heads, headDim int, w ml.Tensor, eps float32, rope *ml.Rope) error {
	const op = "HeadNormRoPE"
	a, err := b.own(op, x)
	if err != nil {
		return err
	}
	if heads <= 0 || headDim <= 0 || headDim%2 != 0 || lastDim(a) != heads*headDim {
		return fmt.Errorf("metalops %s: input %v is not [rows, %d heads × %d] (head dim must be even)", op, a.shape, heads, headDim)
	}
	rows := a.n() / (heads * headDim)
	prm := kernels.HeadParams{Rows: uint32(rows), Heads: uint32(heads), HD: uint32(headDim), Eps: eps}
	var wt, ct, st *tensor
	if w != nil {
		if wt, err = b.own(op+" weight", w); err != nil {
			return err
		}
		if wt.n() != headDim {
			return fmt.Errorf("metalops %s: norm weight of %d values for heads of %d", op, wt.n(), headDim)
		}
		prm.HasW = 1
	}
	if rope != nil {
		if ct, err = b.own(op+" cos table", rope.Cos); err != nil {
			return err
		}
		if st, err = b.own(op+" sin table", rope.Sin); err != nil {
			return err
		}
		if ct.n() != rows*headDim/2 || st.n() != rows*headDim/2 {
			return fmt.Errorf("metalops %s: rope tables %v and %v must be [%d rows, %d]", op, ct.shape, st.shape, rows, headDim/2)
		}
		switch rope.Pairs {
		case ml.Interleaved:
		case ml.HalfSplit:
			prm.Split = 1
		default:
			return fmt.Errorf("metalops %s: unknown rope pairing %d", op, rope.Pairs)
		}
		prm.HasRope = 1
	}
	g, t := kernels.HeadGrid(rows, heads)
	return dispatch(b, b.pipes.headrope, ml.ClassRope, &prm, g, t, func(enc device.Encoder) int {
		a.bind(enc, 0)
		for i, o := range []*tensor{wt, ct, st} {
			if o != nil {
				o.bind(enc, 1+i)
			} else {
				a.bind(enc, 1+i)
			}
		}
		return 4
	})
}

// GELUTanh is dst = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
func (b *Backend) GELUTanh(dst, x ml.Tensor) error {
	return b.unary("GELUTanh", kernels.EltGELUTanh, dst, x, 0)
}

// SwiGLU is dst = SiLU(gate) ⊙ up.
func (b *Backend) SwiGLU(dst, gate, up ml.Tensor) error {
	d, err := b.own("SwiGLU", dst)
	if err != nil {
		return err
	}
	g, err := b.own("SwiGLU", gate)
	if err != nil {
		return err
	}
	u, err := b.own("SwiGLU", up)
	if err != nil {
		return err
	}
	if d.n() != g.n() || u.n() != g.n() {
		return fmt.Errorf("metalops SwiGLU: gate %v, up %v into %v", g.shape, u.shape, d.shape)
	}
	return b.elt(kernels.EltSwiGLU, g, u, d, 0)
}

// GatedResidualModNorm is the DiT's row op, which runs on the fused denoiser (engine/ml/metal).
func (b *Backend) GatedResidualModNorm(x, y, gate, dst, scale ml.Tensor, eps float32) error {
	return fmt.Errorf("metalops: GatedResidualModNorm is the denoiser's op; the Metal denoiser (engine/ml/metal) runs it")
}

// GELUErf is the exact GELU, 0.5·x·(1 + erf(x/√2)). MSL has no erf, so it runs on the host: the
// vision tower's mergers call it twice per image, on [tokens/4, 4·hidden] rows. x is downloaded
// (which waits for the queued work), computed in float64 and rounded once, uploaded and copied
// into dst.
func (b *Backend) GELUErf(dst, x ml.Tensor) error {
	v, err := b.Download(x)
	if err != nil {
		return fmt.Errorf("metalops GELUErf: %w", err)
	}
	for i, a := range v {
		v[i] = float32(0.5 * float64(a) * (1 + math.Erf(float64(a)/math.Sqrt2)))
	}
	t, err := b.Upload(v, x.Shape()...)
	if err != nil {
		return fmt.Errorf("metalops GELUErf: %w", err)
	}
	defer b.Free(t)
	return b.Copy(dst, t)
}
