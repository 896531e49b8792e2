package kernels_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"easel/kernels"
	"easel/kernels/device"
)

func TestEmuRowOp(t *testing.T) {
	for _, mode := range []uint32{1, 2, 3} {
		t.Run(fmt.Sprintf("mode%d", mode), func(t *testing.T) { testRowOp(t, mode) })
	}
}

func testRowOp(t *testing.T, mode uint32) {
	const h, rows, row0, nRows = 1000, 7, 2, 4
	d := newDevice(t, 0)
	p := pipeline(t, d, "rowop.metal", "qi_rowop")
	rng := rand.New(rand.NewPCG(7, uint64(mode)))
	fill := func(n int, f func() float64) (device.Buffer, []float32) {
		b := newBuffer(t, d, 4*n)
		v := device.View[float32](b)
		for i := range v {
			v[i] = float32(f())
		}
		return b, append([]float32(nil), v...)
	}
	// A row mean far from zero checks that the variance is taken around the mean.
	xBuf, x0 := fill(rows*h, func() float64 { return 3 + rng.NormFloat64()*2 })
	yBuf, y := fill(rows*h, rng.NormFloat64)
	gBuf, gate := fill(h, rng.NormFloat64)
	sBuf, scale := fill(h, func() float64 { return rng.NormFloat64() * 0.3 })
	xnBuf := newBuffer(t, d, 2*rows*h)
	prm := kernels.RowParams{H: h, Row0: row0, Mode: mode, Eps: 1e-6, OScale: 0.25}
	groups, threads := kernels.RowOpGrid(nRows)
	run(t, d, p, groups, threads,
		binding{index: 0, buf: xBuf}, binding{index: 1, buf: yBuf}, binding{index: 2, buf: xnBuf},
		binding{index: 3, buf: gBuf}, binding{index: 4, buf: sBuf}, binding{index: 5, bytes: device.StructBytes(&prm)})

	u := math.Ldexp(1, -24)
	x := device.View[float32](xBuf)
	xn := device.View[uint16](xnBuf)
	for r := 0; r < rows; r++ {
		active := r >= row0 && r < row0+nRows
		for i := 0; i < h; i++ {
			at := r*h + i
			ref := float64(x0[at])
			if active && mode&1 != 0 {
				// tanh (2 ulps), the product and the sum: one float rounding each.
				tg := math.Tanh(float64(gate[i])) * float64(y[at])
				ref += tg
				bound := 1.01 * (math.Abs(ref)*u + math.Abs(tg)*3*u)
				if got := float64(x[at]); !(math.Abs(got-ref) <= bound) {
					t.Fatalf("x[%d,%d] = %v, reference %v: error %.3g over the bound %.3g", r, i, got, ref, math.Abs(got-ref), bound)
				}
			} else if x[at] != x0[at] {
				t.Fatalf("x[%d,%d] changed from %v to %v", r, i, x0[at], x[at])
			}
		}
		if !active || mode&2 == 0 {
			for i := 0; i < h; i++ {
				if xn[r*h+i] != 0 {
					t.Fatalf("xn[%d,%d] written outside the rows or the mode", r, i)
				}
			}
			continue
		}
		// LayerNorm of the row as the kernel left it (float32 values, checked above), in float64.
		row := x[r*h : (r+1)*h]
		var sum, sumAbs float64
		for _, v := range row {
			sum += float64(v)
			sumAbs += math.Abs(float64(v))
		}
		mean := sum / h
		var q float64
		for _, v := range row {
			q += (float64(v) - mean) * (float64(v) - mean)
		}
		sigma := math.Sqrt(q/h + float64(prm.Eps))
		// Float errors: the mean is off by at most (h+1)·u·Σ|x|/h; the variance by (h+3)·u of
		// itself plus the mean error squared, so 1/σ by half that plus rsqrt's 2 ulps; then the
		// difference, three products and the rounding to half.
		dMean := float64(h+1) * u * sumAbs / h
		relInv := 0.5*(float64(h+3)*u+dMean*dMean/(sigma*sigma)) + 2*u
		for i := 0; i < h; i++ {
			dv := float64(row[i]) - mean
			k := (1 + float64(scale[i])) * float64(prm.OScale)
			ref := dv / sigma * k
			bound := 1.01 * (math.Abs(k)/sigma*(dMean+math.Abs(dv)*(relInv+5*u)) + math.Abs(ref)*math.Ldexp(1, -11) + math.Ldexp(1, -25))
			if got := halfToFloat64(xn[r*h+i]); !(math.Abs(got-ref) <= bound) {
				t.Fatalf("xn[%d,%d] = %v, reference %v: error %.3g over the bound %.3g", r, i, got, ref, math.Abs(got-ref), bound)
			}
		}
	}
}
