package cpu

import (
	"fmt"
	"math"

	"easel/engine/ml"
)

// rowStats is the mean and biased variance of a row, accumulated in float64.
func rowStats(x []float32) (mean, variance float64) {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	mean = s / float64(len(x))
	var q float64
	for _, v := range x {
		d := float64(v) - mean
		q += d * d
	}
	return mean, q / float64(len(x))
}

// rmsInv is 1/sqrt(mean(x²) + eps).
func rmsInv(x []float32, eps float32) float32 {
	var q float64
	for _, v := range x {
		q += float64(v) * float64(v)
	}
	return float32(1 / math.Sqrt(q/float64(len(x))+float64(eps)))
}

// GatedResidualModNorm is x += tanh(gate)⊙y, then dst = LN(x)·(1+scale).
func (b *Backend) GatedResidualModNorm(x, y, gate, dst, scale ml.Tensor, eps float32) error {
	const op = "GatedResidualModNorm"
	cx, err := host(op, "residual stream x", x)
	if err != nil {
		return err
	}
	D := cx.cols()
	cy, err := optional(op, "branch output y", y)
	if err != nil {
		return err
	}
	var tg []float32
	if cy != nil {
		if err := sameSize(op, cy, cx, "branch output y", "residual stream x"); err != nil {
			return err
		}
		cg, err := host(op, "gate", gate)
		if err != nil {
			return err
		}
		if err := oneRow(op, "gate", cg, D); err != nil {
			return err
		}
		tg = make([]float32, D)
		for i, g := range cg.data {
			tg[i] = float32(math.Tanh(float64(g)))
		}
	}
	cd, err := optional(op, "destination", dst)
	if err != nil {
		return err
	}
	var cs *Tensor
	if cd != nil {
		if err := sameSize(op, cd, cx, "destination", "residual stream x"); err != nil {
			return err
		}
		if cs, err = host(op, "scale", scale); err != nil {
			return err
		}
		if err := oneRow(op, "scale", cs, D); err != nil {
			return err
		}
	}
	defer b.track(ml.ClassNorm, 0)()
	parallelRows(cx.rows(), 4, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr := cx.data[r*D : (r+1)*D]
			if cy != nil {
				yr := cy.data[r*D : (r+1)*D]
				for i := range xr {
					xr[i] += tg[i] * yr[i]
				}
			}
			if cd != nil {
				mean, variance := rowStats(xr)
				inv := 1 / math.Sqrt(variance+float64(eps))
				dr := cd.data[r*D : (r+1)*D]
				for i, v := range xr {
					dr[i] = float32((float64(v)-mean)*inv) * (1 + cs.data[i])
				}
			}
		}
	})
	return nil
}

// RMSNorm is dst = x/rms(x) · w (or · (w+1) when zeroCentred).
func (b *Backend) RMSNorm(dst, x, w ml.Tensor, eps float32, zeroCentred bool) error {
	const op = "RMSNorm"
	cx, err := host(op, "input", x)
	if err != nil {
		return err
	}
	cd, err := host(op, "destination", dst)
	if err != nil {
		return err
	}
	if err := sameSize(op, cd, cx, "destination", "input"); err != nil {
		return err
	}
	D := cx.cols()
	cw, err := optional(op, "weight", w)
	if err != nil {
		return err
	}
	weight := make([]float32, D)
	for i := range weight {
		weight[i] = 1
		if cw != nil {
			if i == 0 {
				if err := oneRow(op, "weight", cw, D); err != nil {
					return err
				}
			}
			weight[i] = cw.data[i]
			if zeroCentred {
				weight[i]++
			}
		}
	}
	defer b.track(ml.ClassNorm, 0)()
	parallelRows(cx.rows(), 4, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, dr := cx.data[r*D:(r+1)*D], cd.data[r*D:(r+1)*D]
			inv := rmsInv(xr, eps)
			for i, v := range xr {
				dr[i] = v * inv * weight[i]
			}
		}
	})
	return nil
}

// LayerNorm is dst = (x − mean)/sqrt(var + eps)·w + b.
func (b *Backend) LayerNorm(dst, x, w, bias ml.Tensor, eps float32) error {
	const op = "LayerNorm"
	cx, err := host(op, "input", x)
	if err != nil {
		return err
	}
	cd, err := host(op, "destination", dst)
	if err != nil {
		return err
	}
	if err := sameSize(op, cd, cx, "destination", "input"); err != nil {
		return err
	}
	D := cx.cols()
	cw, err := optional(op, "weight", w)
	if err != nil {
		return err
	}
	cb, err := optional(op, "bias", bias)
	if err != nil {
		return err
	}
	if cw != nil {
		if err := oneRow(op, "weight", cw, D); err != nil {
			return err
		}
	}
	if cb != nil {
		if err := oneRow(op, "bias", cb, D); err != nil {
			return err
		}
	}
	if D == 0 {
		return fmt.Errorf("cpu.%s: rows of width 0", op)
	}
	defer b.track(ml.ClassNorm, 0)()
	parallelRows(cx.rows(), 4, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, dr := cx.data[r*D:(r+1)*D], cd.data[r*D:(r+1)*D]
			mean, variance := rowStats(xr)
			inv := 1 / math.Sqrt(variance+float64(eps))
			for i, v := range xr {
				y := float32((float64(v) - mean) * inv)
				if cw != nil {
					y *= cw.data[i]
				}
				if cb != nil {
					y += cb.data[i]
				}
				dr[i] = y
			}
		}
	})
	return nil
}
