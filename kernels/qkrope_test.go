package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

func TestEmuQKNormRoPE(t *testing.T) {
	const hd, nh, rows, row0, rope0, nRows = 128, 3, 12, 2, 5, 9
	const h, ldp = nh * hd, 3*nh*hd + 8
	d := newDevice(t, emu.Shuffled)
	p := pipeline(t, d, "qkrope.metal", "qi_qkrope")
	rng := rand.New(rand.NewPCG(5, 6))

	panelBuf := newBuffer(t, d, 2*rows*ldp)
	panelIn := make([]float64, rows*ldp)
	for i := range panelIn {
		device.View[uint16](panelBuf)[i] = float64ToHalf(rng.NormFloat64() * 3)
		panelIn[i] = halfToFloat64(device.View[uint16](panelBuf)[i])
	}
	norms := [2][]float32{make([]float32, hd), make([]float32, hd)}
	normBufs := [2]device.Buffer{newBuffer(t, d, 4*hd), newBuffer(t, d, 4*hd)}
	for k := range norms {
		for i := range norms[k] {
			norms[k][i] = float32(0.5 + rng.Float64())
		}
		copy(device.View[float32](normBufs[k]), norms[k])
	}
	ropeRows := rope0 + nRows
	cosBuf, sinBuf := newBuffer(t, d, 4*ropeRows*64), newBuffer(t, d, 4*ropeRows*64)
	cs, sn := device.View[float32](cosBuf), device.View[float32](sinBuf)
	for i := range cs {
		angle := rng.Float64() * 2 * math.Pi
		cs[i], sn[i] = float32(math.Cos(angle)), float32(math.Sin(angle))
	}
	prm := kernels.QkParams{H: h, NH: nh, Ldp: ldp, Row0: row0, Rope0: rope0, Eps: 1e-6, QMul: float32(math.Log2E / math.Sqrt(hd))}
	groups, threads := kernels.QkRopeGrid(nRows, nh)
	run(t, d, p, groups, threads,
		binding{index: 0, buf: panelBuf}, binding{index: 1, buf: normBufs[0]}, binding{index: 2, buf: normBufs[1]},
		binding{index: 3, buf: cosBuf}, binding{index: 4, buf: sinBuf}, binding{index: 5, bytes: device.StructBytes(&prm)})

	out := device.View[uint16](panelBuf)
	u := math.Ldexp(1, -24)
	touched := map[int]bool{}
	for r := row0; r < row0+nRows; r++ {
		for head := 0; head < 2*nh; head++ {
			isQ := head < nh
			base := r*ldp + head*hd // q heads then k heads are contiguous in the panel
			x := panelIn[base : base+hd]
			var ss float64
			for _, v := range x {
				ss += v * v
			}
			inv := 1 / math.Sqrt(ss/hd+float64(prm.Eps))
			mul := 1.0
			w := norms[1]
			if isQ {
				mul, w = float64(prm.QMul), norms[0]
			}
			for pair := 0; pair < 64; pair++ {
				a := x[2*pair] * inv * float64(w[2*pair])
				b := x[2*pair+1] * inv * float64(w[2*pair+1])
				c, s := float64(cs[(rope0+r-row0)*64+pair]), float64(sn[(rope0+r-row0)*64+pair])
				refs := [2]float64{(a*c - b*s) * mul, (a*s + b*c) * mul}
				// float: the sum of 128 squares and rsqrt (65 + 3 ulps on inv), the weight, the
				// rotation (3 ulps of |a·c|+|b·s|) and qmul; then one rounding to half.
				mag := (math.Abs(a*c) + math.Abs(b*s)) * mul
				for e, ref := range refs {
					at := base + 2*pair + e
					touched[at] = true
					bound := 1.01 * (mag*75*u + math.Abs(ref)*math.Ldexp(1, -11) + math.Ldexp(1, -25))
					if got := halfToFloat64(out[at]); !(math.Abs(got-ref) <= bound) {
						t.Fatalf("row %d head %d channel %d = %v, reference %v: error %.3g over the bound %.3g",
							r, head, 2*pair+e, got, ref, math.Abs(got-ref), bound)
					}
				}
			}
		}
	}
	for i, v := range panelIn {
		if !touched[i] && halfToFloat64(out[i]) != v && !math.IsNaN(v) {
			t.Fatalf("panel element %d (row %d, column %d) changed but is not a q/k channel of the rows", i, i/ldp, i%ldp)
		}
	}
}
