package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"easel/engine/quant"
	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// decBound is the one-row kernels' bound against a float64 reference: float accumulation over at
// most a few hundred terms (a few 2^-24 relative each), relative to the row's scale.
const decBound = 2e-6

// decBuffer uploads v into a new device buffer.
func decBuffer(t *testing.T, d device.Device, v []float32) device.Buffer {
	t.Helper()
	b := newBuffer(t, d, 4*max(len(v), 1))
	copy(device.View[float32](b), v)
	return b
}

func randFloats(rng *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * scale)
	}
	return v
}

// closeTo fails when got differs from want by more than decBound relative to the larger of |want|
// and ref (the scale of the terms).
func closeTo(t *testing.T, what string, i int, got float32, want, ref float64) {
	t.Helper()
	if e := math.Abs(float64(got) - want); !(e <= decBound*max(math.Abs(want), ref)) {
		t.Fatalf("%s[%d] = %v, reference %v: error %.3g over %.3g", what, i, got, want, e, decBound*max(math.Abs(want), ref))
	}
}

// dec_gemv over every codec it reads, against the CPU's own dequantization of the same payload:
// stored, then added to a residual, at output and input offsets.
func TestEmuDecodeGEMV(t *testing.T) {
	const rows, cols, xOff, yOff = 37, 96, 3, 5
	d := newDevice(t, emu.Forward)
	p := pipeline(t, d, "decode.metal", "dec_gemv")
	if err := kernels.FitsBaseline("dec_gemv", p); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(32, 1))
	for _, dt := range []quant.DType{quant.F32, quant.F16, quant.BF16, quant.Q8Row, quant.Q8_2F, quant.Q4TP} {
		t.Run(dt.String(), func(t *testing.T) {
			payload, err := quant.Encode(dt, []int{rows, cols}, randFloats(rng, rows*cols, 0.5))
			if err != nil {
				t.Fatal(err)
			}
			w, err := quant.Dequantize(&quant.Tensor{Name: "w", DType: dt, Shape: []int{rows, cols}, Data: payload})
			if err != nil {
				t.Fatal(err)
			}
			x := randFloats(rng, xOff+cols, 1)
			res := randFloats(rng, yOff+rows, 2)
			wb := newBuffer(t, d, len(payload))
			copy(wb.Bytes(), payload)
			xb, yb := decBuffer(t, d, x), decBuffer(t, d, res)
			for _, add := range []uint32{0, 1} {
				copy(device.View[float32](yb), res)
				prm := kernels.DecParams{Rows: rows, Cols: cols, DType: uint32(dt), Add: add, YOff: yOff, XOff: xOff}
				groups, threads := kernels.DecodeGrid(rows)
				run(t, d, p, groups, threads, binding{index: 0, buf: wb}, binding{index: 1, buf: xb}, binding{index: 2, buf: yb},
					binding{index: 3, bytes: device.StructBytes(&prm)})
				y := device.View[float32](yb)
				for i := range yOff {
					if y[i] != res[i] {
						t.Fatalf("y[%d] lies before the output and was written", i)
					}
				}
				for r := range rows {
					var dot, mag float64
					for c := range cols {
						dot += float64(w[r*cols+c]) * float64(x[xOff+c])
						mag += math.Abs(float64(w[r*cols+c]) * float64(x[xOff+c]))
					}
					if add == 1 {
						dot += float64(res[yOff+r])
						mag += math.Abs(float64(res[yOff+r]))
					}
					closeTo(t, "y", r, y[yOff+r], dot, mag)
				}
			}
		})
	}
}

// dec_rmsnorm over several rows at offsets.
func TestEmuDecodeRMSNorm(t *testing.T) {
	const rows, cols, xOff, yOff, eps = 3, 80, 7, 2, 1e-6
	d := newDevice(t, emu.Forward)
	p := pipeline(t, d, "decode.metal", "dec_rmsnorm")
	rng := rand.New(rand.NewPCG(32, 2))
	x, w := randFloats(rng, xOff+rows*cols, 3), randFloats(rng, cols, 1)
	xb, wb, yb := decBuffer(t, d, x), decBuffer(t, d, w), decBuffer(t, d, make([]float32, yOff+rows*cols))
	prm := kernels.DecParams{Rows: rows, Cols: cols, XOff: xOff, YOff: yOff, Eps: eps}
	groups, threads := kernels.DecodeGrid(rows)
	run(t, d, p, groups, threads, binding{index: 0, buf: xb}, binding{index: 1, buf: wb}, binding{index: 2, buf: yb},
		binding{index: 3, bytes: device.StructBytes(&prm)})
	y := device.View[float32](yb)
	for r := range rows {
		v := x[xOff+r*cols : xOff+(r+1)*cols]
		ss := 0.0
		for _, e := range v {
			ss += float64(e) * float64(e)
		}
		inv := 1 / math.Sqrt(ss/cols+eps)
		for i := range cols {
			want := float64(v[i]) * inv * float64(w[i])
			closeTo(t, "y", r*cols+i, y[yOff+r*cols+i], want, 0)
		}
	}
}

// dec_headrope: per-head RMSNorm, then the half-split rotation, in place at an offset.
func TestEmuDecodeHeadRoPE(t *testing.T) {
	const heads, hd, off, eps = 5, 64, 9, 1e-6
	d := newDevice(t, emu.Forward)
	p := pipeline(t, d, "decode.metal", "dec_headrope")
	rng := rand.New(rand.NewPCG(32, 3))
	x, w := randFloats(rng, off+heads*hd, 2), randFloats(rng, hd, 1)
	cs := make([]float32, hd)
	for j := range hd / 2 {
		a := rng.Float64() * 6
		cs[j], cs[hd/2+j] = float32(math.Cos(a)), float32(math.Sin(a))
	}
	xb := decBuffer(t, d, x)
	prm := kernels.DecParams{Rows: heads, Cols: hd, YOff: off, Eps: eps}
	groups, threads := kernels.DecodeGrid(heads)
	run(t, d, p, groups, threads, binding{index: 0, buf: xb}, binding{index: 1, buf: decBuffer(t, d, w)},
		binding{index: 2, buf: decBuffer(t, d, cs)}, binding{index: 3, bytes: device.StructBytes(&prm)})
	y := device.View[float32](xb)
	for h := range heads {
		v := x[off+h*hd : off+(h+1)*hd]
		ss := 0.0
		for _, e := range v {
			ss += float64(e) * float64(e)
		}
		inv := 1 / math.Sqrt(ss/hd+eps)
		for j := range hd / 2 {
			a, b := float64(v[j])*inv*float64(w[j]), float64(v[j+hd/2])*inv*float64(w[j+hd/2])
			c, s := float64(cs[j]), float64(cs[hd/2+j])
			ref := math.Abs(a) + math.Abs(b)
			closeTo(t, "x", h*hd+j, y[off+h*hd+j], a*c-b*s, ref)
			closeTo(t, "x", h*hd+j+hd/2, y[off+h*hd+j+hd/2], a*s+b*c, ref)
		}
	}
}

// dec_attn: grouped-query attention of one row over 45 cached keys (more than a simdgroup's
// lanes, so every lane holds several).
func TestEmuDecodeAttention(t *testing.T) {
	const heads, kvHeads, hd, keys, stride = 4, 2, 32, 45, 48
	d := newDevice(t, emu.Forward)
	p := pipeline(t, d, "decode.metal", "dec_attn")
	rng := rand.New(rand.NewPCG(32, 4))
	q, k, v := randFloats(rng, heads*hd, 1), randFloats(rng, keys*kvHeads*hd, 1), randFloats(rng, keys*kvHeads*hd, 1)
	scale := float32(1 / math.Sqrt(hd))
	ob := decBuffer(t, d, make([]float32, heads*hd))
	prm := kernels.DecParams{Rows: heads, Cols: hd, Keys: keys, KVHeads: kvHeads, Scale: scale, Stride: stride}
	groups, threads := kernels.DecodeGrid(heads)
	run(t, d, p, groups, threads, binding{index: 0, buf: decBuffer(t, d, q)}, binding{index: 1, buf: decBuffer(t, d, k)},
		binding{index: 2, buf: decBuffer(t, d, v)}, binding{index: 3, buf: ob},
		binding{index: 4, buf: decBuffer(t, d, make([]float32, heads*stride))}, binding{index: 5, bytes: device.StructBytes(&prm)})
	out := device.View[float32](ob)
	for h := range heads {
		g := h / (heads / kvHeads)
		s := make([]float64, keys)
		m := math.Inf(-1)
		for t := range keys {
			for e := range hd {
				s[t] += float64(q[h*hd+e]) * float64(k[t*kvHeads*hd+g*hd+e])
			}
			s[t] *= float64(scale)
			m = max(m, s[t])
		}
		sum := 0.0
		for t := range s {
			s[t] = math.Exp(s[t] - m)
			sum += s[t]
		}
		for e := range hd {
			want, mag := 0.0, 0.0
			for t := range keys {
				want += s[t] / sum * float64(v[t*kvHeads*hd+g*hd+e])
				mag += s[t] / sum * math.Abs(float64(v[t*kvHeads*hd+g*hd+e]))
			}
			closeTo(t, "out", h*hd+e, out[h*hd+e], want, mag)
		}
	}
}

// dec_swiglu in place.
func TestEmuDecodeSwiGLU(t *testing.T) {
	const n = 300
	d := newDevice(t, emu.Forward)
	p := pipeline(t, d, "decode.metal", "dec_swiglu")
	rng := rand.New(rand.NewPCG(32, 5))
	g, u := randFloats(rng, n, 4), randFloats(rng, n, 2)
	gb := decBuffer(t, d, g)
	prm := kernels.DecParams{Rows: n}
	groups, threads := kernels.DecodeElementGrid(n)
	run(t, d, p, groups, threads, binding{index: 0, buf: gb}, binding{index: 1, buf: decBuffer(t, d, u)},
		binding{index: 2, bytes: device.StructBytes(&prm)})
	out := device.View[float32](gb)
	for i := range n {
		x := float64(g[i])
		closeTo(t, "g", i, out[i], x/(1+math.Exp(-x))*float64(u[i]), 0)
	}
}
