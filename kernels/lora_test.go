package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"easel/kernels"
	"easel/kernels/device"
)

// TestEmuLoRA runs the down and up kernels on half and float inputs and outputs (with a row
// stride, offsets and a bias) and the LN input of proj_out, against float64 references.
func TestEmuLoRA(t *testing.T) {
	const n, in, out, rank, ldx, xOff, ldy, yOff = 37, 96, 130, 7, 100, 3, 140, 5
	d := newDevice(t, 0)
	rng := rand.New(rand.NewPCG(8, 9))
	randf := func(k int, s float64) []float32 {
		v := make([]float32, k)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * s)
		}
		return v
	}
	floatBuf := func(v []float32) device.Buffer {
		b := newBuffer(t, d, 4*max(len(v), 1))
		copy(device.View[float32](b), v)
		return b
	}
	x := randf(n*ldx, 1)
	for i := range x {
		x[i] = float32(halfToFloat64(float64ToHalf(float64(x[i])))) // representable in half
	}
	A, s, B, bias := randf(rank*in, 0.3), randf(rank, 1), randf(out*rank, 0.3), randf(out, 0.5)
	y0 := randf(n*ldy, 1)
	for i := range y0 {
		y0[i] = float32(halfToFloat64(float64ToHalf(float64(y0[i]))))
	}
	const mul, biasMul = 0.5, 0.25
	want := make([]float64, n*out)
	for r := 0; r < n; r++ {
		for o := 0; o < out; o++ {
			acc := 0.0
			for c := 0; c < rank; c++ {
				tc := 0.0
				for k := 0; k < in; k++ {
					tc += float64(x[r*ldx+xOff+k]) * float64(A[c*in+k])
				}
				acc += tc * float64(s[c]) * float64(B[o*rank+c])
			}
			want[r*out+o] = float64(y0[r*ldy+yOff+o]) + mul*acc + biasMul*float64(bias[o])
		}
	}
	for _, halfIO := range []bool{false, true} {
		xb := floatBuf(x)
		yb := floatBuf(y0)
		down, up := "qi_lora_down_f", "qi_lora_up"
		if halfIO {
			down, up = "qi_lora_down_h", "qi_lora_up_h"
			xb, yb = newBuffer(t, d, 2*len(x)), newBuffer(t, d, 2*len(y0))
			for i, v := range x {
				device.View[uint16](xb)[i] = float64ToHalf(float64(v))
			}
			for i, v := range y0 {
				device.View[uint16](yb)[i] = float64ToHalf(float64(v))
			}
		}
		tb := newBuffer(t, d, 4*n*rank)
		prm := kernels.LoraParams{N: n, M: rank, K: in, Ldx: ldx, XOff: xOff}
		g, th := kernels.LoraGrid(n, rank)
		run(t, d, pipeline(t, d, "lora.metal", down), g, th, binding{index: 0, buf: xb}, binding{index: 1, buf: floatBuf(A)},
			binding{index: 2, buf: floatBuf(s)}, binding{index: 3, buf: tb}, binding{index: 4, bytes: device.StructBytes(&prm)})
		prm = kernels.LoraParams{N: n, M: out, K: rank, Ldy: ldy, YOff: yOff, HasBias: 1, Mul: mul, BiasMul: biasMul}
		g, th = kernels.LoraGrid(n, out)
		run(t, d, pipeline(t, d, "lora.metal", up), g, th, binding{index: 0, buf: tb}, binding{index: 1, buf: floatBuf(B)},
			binding{index: 2, buf: floatBuf(bias)}, binding{index: 3, buf: yb}, binding{index: 4, bytes: device.StructBytes(&prm)})
		for r := 0; r < n; r++ {
			for i := 0; i < ldy; i++ {
				var got float64
				if halfIO {
					got = halfToFloat64(device.View[uint16](yb)[r*ldy+i])
				} else {
					got = float64(device.View[float32](yb)[r*ldy+i])
				}
				o := i - yOff
				if o < 0 || o >= out {
					if got != float64(y0[r*ldy+i]) {
						t.Fatalf("%s: y[%d][%d] outside the layer's columns was changed", up, r, i)
					}
					continue
				}
				ref := want[r*out+o]
				bound := 1e-5 * (1 + math.Abs(ref))
				if halfIO {
					bound = math.Abs(ref)*math.Ldexp(1, -11) + math.Ldexp(1, -24) + 1e-5
				}
				if math.Abs(got-ref) > bound {
					t.Fatalf("%s: y[%d][%d] = %v, reference %v (bound %.3g)", up, r, o, got, ref, bound)
				}
			}
		}
	}
	// proj_out's input: LN(x)·fs over rows 2.. of a [rows][in] stream.
	const row0, eps = 2, 1e-6
	fs, stream := randf(in, 1), randf((n+row0)*in, 2)
	hb := newBuffer(t, d, 4*n*in)
	prm := kernels.LoraParams{N: n, K: in, XOff: row0, Eps: eps}
	g, th := kernels.LoraLNScaleGrid(n)
	run(t, d, pipeline(t, d, "lora.metal", "qi_lora_lnscale"), g, th, binding{index: 0, buf: floatBuf(stream)}, binding{index: 1, buf: floatBuf(fs)},
		binding{index: 2, buf: hb}, binding{index: 3, bytes: device.StructBytes(&prm)})
	for r := 0; r < n; r++ {
		row := stream[(row0+r)*in : (row0+r+1)*in]
		mean, v := 0.0, 0.0
		for _, e := range row {
			mean += float64(e)
		}
		mean /= in
		for _, e := range row {
			v += (float64(e) - mean) * (float64(e) - mean)
		}
		inv := 1 / math.Sqrt(v/in+eps)
		for i, e := range row {
			ref := (float64(e) - mean) * inv * float64(fs[i])
			if got := float64(device.View[float32](hb)[r*in+i]); math.Abs(got-ref) > 1e-5*(1+math.Abs(ref)) {
				t.Fatalf("lnscale h[%d][%d] = %v, reference %v", r, i, got, ref)
			}
		}
	}
}
