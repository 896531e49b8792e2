package metalops

import (
	"fmt"

	"easel/engine/ml"
	"easel/engine/quant"
	"easel/kernels"
	"easel/kernels/device"
)

// dispatch encodes one kernel of an op of class (the profiling mode's timing class): pipeline p, the given tensors at buffer indices 0.., the params
// struct at the next index, then the grid.
func dispatch[P any](b *Backend, p device.Pipeline, class ml.Class, params *P, groups, threads device.Size, bind func(enc device.Encoder) int) error {
	enc, err := b.encoder(class)
	if err != nil {
		return err
	}
	enc.SetPipeline(p)
	next := bind(enc)
	enc.SetBytes(device.StructBytes(params), next)
	enc.Dispatch(groups, threads)
	b.dispatched()
	return nil
}

// elt encodes vae_elt: y = op(a, c) with c of n elements or one repeating row (nil for none).
func (b *Backend) elt(op uint32, a, c, y *tensor, s float32) error {
	n := a.n()
	prm := kernels.EltParams{N: uint32(n), BN: 1, Op: op, S: s}
	if c != nil {
		prm.BN = uint32(c.n())
	}
	g, t := kernels.ElementGrid(n)
	class := ml.ClassAct
	if op == kernels.EltCopy || op == kernels.EltZero {
		class = ml.ClassCopy
	}
	return dispatch(b, b.pipes.elt, class, &prm, g, t, func(enc device.Encoder) int {
		a.bind(enc, 0)
		if c != nil {
			c.bind(enc, 1)
		} else {
			a.bind(enc, 1)
		}
		y.bind(enc, 2)
		return 3
	})
}

// binary checks and encodes dst = a op c, c of a's size or one row of a's last dimension.
func (b *Backend) binary(name string, op uint32, dst, a, c ml.Tensor) error {
	d, err := b.own(name, dst)
	if err != nil {
		return err
	}
	x, err := b.own(name, a)
	if err != nil {
		return err
	}
	y, err := b.own(name, c)
	if err != nil {
		return err
	}
	last := x.shape[len(x.shape)-1]
	if d.n() != x.n() || (y.n() != x.n() && y.n() != last) {
		return fmt.Errorf("metalops %s: shapes %v, %v into %v: the second operand needs the first's size or one row of %d", name, x.shape, y.shape, d.shape, last)
	}
	return b.elt(op, x, y, d, 0)
}

// unary checks and encodes dst = op(x).
func (b *Backend) unary(name string, op uint32, dst, x ml.Tensor, s float32) error {
	d, err := b.own(name, dst)
	if err != nil {
		return err
	}
	a, err := b.own(name, x)
	if err != nil {
		return err
	}
	if d.n() != a.n() {
		return fmt.Errorf("metalops %s: %v into %v: the element counts differ", name, a.shape, d.shape)
	}
	return b.elt(op, a, nil, d, s)
}

// SiLU is dst = x·sigmoid(x).
func (b *Backend) SiLU(dst, x ml.Tensor) error { return b.unary("SiLU", kernels.EltSiLU, dst, x, 0) }

// Add is dst = a + c.
func (b *Backend) Add(dst, a, c ml.Tensor) error { return b.binary("Add", kernels.EltAdd, dst, a, c) }

// Mul is dst = a ⊙ c.
func (b *Backend) Mul(dst, a, c ml.Tensor) error { return b.binary("Mul", kernels.EltMul, dst, a, c) }

// Scale is dst = s·x.
func (b *Backend) Scale(dst, x ml.Tensor, s float32) error {
	return b.unary("Scale", kernels.EltScale, dst, x, s)
}

// Copy copies src into dst.
func (b *Backend) Copy(dst, src ml.Tensor) error {
	return b.unary("Copy", kernels.EltCopy, dst, src, 0)
}

// Transpose is dst[c, r] = x[r, c] for a 2-D x.
func (b *Backend) Transpose(dst, x ml.Tensor) error {
	d, err := b.own("Transpose", dst)
	if err != nil {
		return err
	}
	a, err := b.own("Transpose", x)
	if err != nil {
		return err
	}
	if len(a.shape) != 2 || len(d.shape) != 2 || d.shape[0] != a.shape[1] || d.shape[1] != a.shape[0] {
		return fmt.Errorf("metalops Transpose: %v into %v, want [R, C] into [C, R]", a.shape, d.shape)
	}
	prm := kernels.TransposeParams{Rows: uint32(a.shape[0]), Cols: uint32(a.shape[1])}
	g, t := kernels.TransposeGrid(a.shape[0], a.shape[1])
	return dispatch(b, b.pipes.transpose, ml.ClassCopy, &prm, g, t, func(enc device.Encoder) int {
		a.bind(enc, 0)
		d.bind(enc, 1)
		return 2
	})
}

// UpsampleNearest is dst[c, y, x] = x[c, y/f, x/f].
func (b *Backend) UpsampleNearest(dst, x ml.Tensor, factor int) error {
	d, err := b.own("UpsampleNearest", dst)
	if err != nil {
		return err
	}
	a, err := b.own("UpsampleNearest", x)
	if err != nil {
		return err
	}
	c, h, w, err := chw("UpsampleNearest", a)
	if err != nil {
		return err
	}
	if factor < 1 || len(d.shape) != 3 || d.shape[0] != c || d.shape[1] != factor*h || d.shape[2] != factor*w {
		return fmt.Errorf("metalops UpsampleNearest: %v ×%d into %v", a.shape, factor, d.shape)
	}
	prm := kernels.UpParams{C: uint32(c), H: uint32(h), W: uint32(w), F: uint32(factor)}
	g, t := kernels.ElementGrid(d.n())
	return dispatch(b, b.pipes.upsample, ml.ClassConv, &prm, g, t, func(enc device.Encoder) int {
		a.bind(enc, 0)
		d.bind(enc, 1)
		return 2
	})
}

// ChannelRMSNorm scales every pixel's channel vector to RMS 1, times gamma.
func (b *Backend) ChannelRMSNorm(dst, x, gamma ml.Tensor, eps float32) error {
	d, a, g, c, pixels, err := b.perChannel("ChannelRMSNorm", "gamma", dst, x, gamma)
	if err != nil {
		return err
	}
	prm := kernels.NormParams{C: uint32(c), Pixels: uint32(pixels), Eps: eps}
	gr, t := kernels.ElementGrid(pixels)
	return dispatch(b, b.pipes.chnorm, ml.ClassNorm, &prm, gr, t, func(enc device.Encoder) int {
		a.bind(enc, 0)
		g.bind(enc, 1)
		d.bind(enc, 2)
		return 3
	})
}

// Conv2D convolves x [inC, H, W] with w [outC, inC, k, k] plus bias into dst [outC, H', W'].
func (b *Backend) Conv2D(dst, x ml.Tensor, w *quant.Tensor, bias ml.Tensor, spec ml.ConvSpec) error {
	d, err := b.own("Conv2D", dst)
	if err != nil {
		return err
	}
	a, err := b.own("Conv2D", x)
	if err != nil {
		return err
	}
	ic, h, wd, err := chw("Conv2D", a)
	if err != nil {
		return err
	}
	if w == nil || len(w.Shape) != 4 || w.Shape[1] != ic || w.Shape[2] != w.Shape[3] {
		var s []int
		if w != nil {
			s = w.Shape
		}
		return fmt.Errorf("metalops Conv2D: weight %v for %d input channels; want [out, %d, k, k]", s, ic, ic)
	}
	oc, k := w.Shape[0], w.Shape[2]
	if spec.Stride < 1 || spec.PadTop < 0 || spec.PadLeft < 0 || spec.PadBottom < 0 || spec.PadRight < 0 {
		return fmt.Errorf("metalops Conv2D: stride %d and padding %+v", spec.Stride, spec)
	}
	oh := (h+spec.PadTop+spec.PadBottom-k)/spec.Stride + 1
	ow := (wd+spec.PadLeft+spec.PadRight-k)/spec.Stride + 1
	if len(d.shape) != 3 || d.shape[0] != oc || d.shape[1] != oh || d.shape[2] != ow {
		return fmt.Errorf("metalops Conv2D: output %v, want [%d, %d, %d]", d.shape, oc, oh, ow)
	}
	var bt *tensor
	if bias != nil {
		if bt, err = b.own("Conv2D", bias); err != nil {
			return err
		}
		if bt.n() != oc {
			return fmt.Errorf("metalops Conv2D: bias of %d values for %d outputs", bt.n(), oc)
		}
	}
	wbuf, woff, err := b.weight(w)
	if err != nil {
		return err
	}
	if err := b.guard(a, ml.ClassConv); err != nil {
		return err
	}
	prm := kernels.ConvParams{IC: uint32(ic), H: uint32(h), W: uint32(wd), OC: uint32(oc), OH: uint32(oh), OW: uint32(ow),
		K: uint32(k), Stride: uint32(spec.Stride), PadTop: uint32(spec.PadTop), PadLeft: uint32(spec.PadLeft), Guard: 1}
	if bt != nil {
		prm.HasBias = 1
	}
	g, t := kernels.ConvGrid(oh*ow, oc)
	b.flops = 2 * float64(oh*ow) * float64(oc) * float64(ic*k*k)
	return dispatch(b, b.pipes.conv, ml.ClassConv, &prm, g, t, func(enc device.Encoder) int {
		enc.SetBuffer(wbuf, woff, 0)
		a.bind(enc, 1)
		d.bind(enc, 2)
		if bt != nil {
			bt.bind(enc, 3)
		} else {
			d.bind(enc, 3)
		}
		b.amaxSlot.bind(enc, 5)
		return 4
	})
}

var _ ml.Backend = (*Backend)(nil)
