package cpu

import (
	"fmt"
	"math"

	"easel/engine/ml"
)

// unary applies f element-wise from x into dst (same element count).
func (b *Backend) unary(op string, dst, x ml.Tensor, f func(float32) float32) error {
	cd, err := host(op, "destination", dst)
	if err != nil {
		return err
	}
	cx, err := host(op, "input", x)
	if err != nil {
		return err
	}
	if err := sameSize(op, cd, cx, "destination", "input"); err != nil {
		return err
	}
	defer b.track(ml.ClassAct, 0)()
	parallelRows(len(cx.data), 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			cd.data[i] = f(cx.data[i])
		}
	})
	return nil
}

// silu is v·sigmoid(v), with exp32 always given a non-positive argument.
func silu(v float32) float32 {
	if v >= 0 {
		return v / (1 + exp32(-v))
	}
	e := exp32(v)
	return v * e / (1 + e)
}

// sqrt2OverPi is √(2/π), GELU-tanh's constant.
var sqrt2OverPi = math.Sqrt(2 / math.Pi)

func geluTanh(v float32) float32 {
	x := float64(v)
	return float32(0.5 * x * (1 + math.Tanh(sqrt2OverPi*(x+0.044715*x*x*x))))
}

// SiLU is dst = x·sigmoid(x).
func (b *Backend) SiLU(dst, x ml.Tensor) error { return b.unary("SiLU", dst, x, silu) }

// GELUTanh is the tanh approximation of GELU.
func (b *Backend) GELUTanh(dst, x ml.Tensor) error { return b.unary("GELUTanh", dst, x, geluTanh) }

// Scale is dst = s·x.
func (b *Backend) Scale(dst, x ml.Tensor, s float32) error {
	return b.unary("Scale", dst, x, func(v float32) float32 { return s * v })
}

// binary applies f element-wise to a and b (b same size as a, or one row broadcast) into dst.
func (b *Backend) binary(op string, dst, a, bb ml.Tensor, f func(x, y float32) float32) error {
	cd, err := host(op, "destination", dst)
	if err != nil {
		return err
	}
	ca, err := host(op, "first operand", a)
	if err != nil {
		return err
	}
	cb, err := host(op, "second operand", bb)
	if err != nil {
		return err
	}
	if err := sameSize(op, cd, ca, "destination", "first operand"); err != nil {
		return err
	}
	width := len(cb.data)
	if width != len(ca.data) && (width != ca.cols() || width == 0) {
		return fmt.Errorf("cpu.%s: second operand has shape %v; it must match the first operand %v or be one row of %d", op, cb.shape, ca.shape, ca.cols())
	}
	defer b.track(ml.ClassAct, 0)()
	parallelRows(len(ca.data), 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			cd.data[i] = f(ca.data[i], cb.data[i%width])
		}
	})
	return nil
}

// Add is dst = a + b.
func (b *Backend) Add(dst, a, bb ml.Tensor) error {
	return b.binary("Add", dst, a, bb, func(x, y float32) float32 { return x + y })
}

// Mul is dst = a ⊙ b.
func (b *Backend) Mul(dst, a, bb ml.Tensor) error {
	return b.binary("Mul", dst, a, bb, func(x, y float32) float32 { return x * y })
}

// SwiGLU is dst = SiLU(gate) ⊙ up.
func (b *Backend) SwiGLU(dst, gate, up ml.Tensor) error {
	const op = "SwiGLU"
	cd, err := host(op, "destination", dst)
	if err != nil {
		return err
	}
	cg, err := host(op, "gate", gate)
	if err != nil {
		return err
	}
	cu, err := host(op, "up", up)
	if err != nil {
		return err
	}
	if err := sameSize(op, cg, cu, "gate", "up"); err != nil {
		return err
	}
	if err := sameSize(op, cd, cg, "destination", "gate"); err != nil {
		return err
	}
	defer b.track(ml.ClassAct, 0)()
	parallelRows(len(cg.data), 1<<14, func(lo, hi int) {
		d, g, u := cd.data[lo:hi], cg.data[lo:hi], cu.data[lo:hi]
		for i := range d {
			d[i] = silu(g[i]) * u[i]
		}
	})
	return nil
}

// Copy copies src into dst.
func (b *Backend) Copy(dst, src ml.Tensor) error {
	cd, err := host("Copy", "destination", dst)
	if err != nil {
		return err
	}
	cs, err := host("Copy", "source", src)
	if err != nil {
		return err
	}
	if err := sameSize("Copy", cd, cs, "destination", "source"); err != nil {
		return err
	}
	defer b.track(ml.ClassCopy, 0)()
	copy(cd.data, cs.data)
	return nil
}

// Transpose is dst[c, r] = x[r, c].
func (b *Backend) Transpose(dst, x ml.Tensor) error {
	cd, err := host("Transpose", "destination", dst)
	if err != nil {
		return err
	}
	cx, err := host("Transpose", "input", x)
	if err != nil {
		return err
	}
	r, c := cx.rows(), cx.cols()
	if cd.rows() != c || cd.cols() != r {
		return fmt.Errorf("cpu.Transpose: input is %v ([%d, %d]) so the destination must be [%d, %d], not %v", cx.shape, r, c, c, r, cd.shape)
	}
	defer b.track(ml.ClassCopy, 0)()
	const blk = 32
	parallelRows((c+blk-1)/blk, 1, func(lo, hi int) {
		for j0 := lo * blk; j0 < min(hi*blk, c); j0 += blk {
			for i0 := 0; i0 < r; i0 += blk {
				for j := j0; j < min(j0+blk, c); j++ {
					for i := i0; i < min(i0+blk, r); i++ {
						cd.data[j*r+i] = cx.data[i*c+j]
					}
				}
			}
		}
	})
	return nil
}
