package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"easel/kernels"
	"easel/kernels/device"
)

func TestEmuSwiGLU(t *testing.T) {
	const n4, gOff, uOff, hOff = 300, 5, 1300, 7
	d := newDevice(t, 0)
	p := pipeline(t, d, "swiglu.metal", "qi_swiglu")
	rng := rand.New(rand.NewPCG(3, 4))
	guBuf := newBuffer(t, d, 4*(uOff+4*n4))
	gu := device.View[float32](guBuf)
	for i := range gu {
		gu[i] = float32(rng.NormFloat64() * 4)
	}
	hBuf := newBuffer(t, d, 2*(hOff+4*n4+8))
	for i := range hBuf.Bytes() {
		hBuf.Bytes()[i] = 0xff
	}
	prm := kernels.SwigluParams{N4: n4, GOff: gOff, UOff: uOff, HOff: hOff, OScale: 0.25}
	groups, threads := kernels.SwigluGrid(n4)
	run(t, d, p, groups, threads,
		binding{index: 0, buf: guBuf}, binding{index: 1, buf: hBuf}, binding{index: 2, bytes: device.StructBytes(&prm)})

	out := device.View[uint16](hBuf)
	for i := range out {
		if i < hOff || i >= hOff+4*n4 {
			if out[i] != 0xffff {
				t.Fatalf("h[%d] is outside the output range but was written", i)
			}
			continue
		}
		e := i - hOff
		g, u := float64(gu[gOff+e]), float64(gu[uOff+e])
		ref := g / (1 + math.Exp(-g)) * u * float64(prm.OScale)
		// float evaluation (exp, divide, two multiplies: 10·2^-24 relative), then one rounding to
		// half (2^-11 relative, or 2^-25 absolute in the subnormal range).
		bound := 1.01 * (math.Abs(ref)*(math.Ldexp(1, -11)+10*math.Ldexp(1, -24)) + math.Ldexp(1, -25))
		if got := halfToFloat64(out[i]); !(math.Abs(got-ref) <= bound) {
			t.Fatalf("h[%d] = %v, reference %v (g %v, u %v): error %.3g over the bound %.3g", e, got, ref, g, u, math.Abs(got-ref), bound)
		}
	}
}
