package cpu

import (
	"fmt"

	"easel/engine/ml"
)

// HeadNormRoPE normalizes each head of x with w and rotates it by rope, in place.
func (b *Backend) HeadNormRoPE(x ml.Tensor, heads, headDim int, w ml.Tensor, eps float32, rope *ml.Rope) error {
	const op = "HeadNormRoPE"
	cx, err := host(op, "input", x)
	if err != nil {
		return err
	}
	if heads <= 0 || headDim <= 0 || headDim%2 != 0 || cx.cols() != heads*headDim {
		return fmt.Errorf("cpu.%s: input %v is not [rows, %d heads × %d] (head dim must be even)", op, cx.shape, heads, headDim)
	}
	cw, err := optional(op, "norm weight", w)
	if err != nil {
		return err
	}
	if cw != nil {
		if err := oneRow(op, "norm weight", cw, headDim); err != nil {
			return err
		}
	}
	rows, half := cx.rows(), headDim/2
	var cosT, sinT *Tensor
	if rope != nil {
		if cosT, err = host(op, "rope cos table", rope.Cos); err != nil {
			return err
		}
		if sinT, err = host(op, "rope sin table", rope.Sin); err != nil {
			return err
		}
		if len(cosT.data) != rows*half || len(sinT.data) != rows*half {
			return fmt.Errorf("cpu.%s: rope tables %v and %v must be [%d rows, %d]", op, cosT.shape, sinT.shape, rows, half)
		}
		if rope.Pairs != ml.Interleaved && rope.Pairs != ml.HalfSplit {
			return fmt.Errorf("cpu.%s: unknown rope pairing %d", op, rope.Pairs)
		}
	}
	defer b.track(ml.ClassRope, 0)()
	parallelRows(rows, 4, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			for h := 0; h < heads; h++ {
				v := cx.data[(r*heads+h)*headDim : (r*heads+h+1)*headDim]
				if cw != nil {
					inv := rmsInv(v, eps)
					for i := range v {
						v[i] = v[i] * inv * cw.data[i]
					}
				}
				if rope == nil {
					continue
				}
				c, s := cosT.data[r*half:(r+1)*half], sinT.data[r*half:(r+1)*half]
				if rope.Pairs == ml.Interleaved {
					for p := 0; p < half; p++ {
						a, bb := v[2*p], v[2*p+1]
						v[2*p] = a*c[p] - bb*s[p]
						v[2*p+1] = a*s[p] + bb*c[p]
					}
				} else {
					for p := 0; p < half; p++ {
						a, bb := v[p], v[p+half]
						v[p] = a*c[p] - bb*s[p]
						v[p+half] = bb*c[p] + a*s[p]
					}
				}
			}
		}
	})
	return nil
}
