package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// floatBuffer allocates a buffer of n float32 drawn from f and returns its contents too.
func floatBuffer(t *testing.T, d device.Device, n int, f func() float64) (device.Buffer, []float32) {
	b := newBuffer(t, d, 4*n)
	v := device.View[float32](b)
	for i := range v {
		v[i] = float32(f())
	}
	return b, append([]float32(nil), v...)
}

func TestEmuEmbed(t *testing.T) {
	const h, n = 300, 5
	d := newDevice(t, emu.Forward)
	p := pipeline(t, d, "embed.metal", "qi_embed")
	rng := rand.New(rand.NewPCG(10, 11))
	tokBuf, tok := floatBuffer(t, d, n*64, rng.NormFloat64)
	wBuf, w := floatBuffer(t, d, h*64+h, func() float64 { return rng.NormFloat64() * 0.1 })
	xBuf := newBuffer(t, d, 4*n*h)
	prm := kernels.EmbedParams{H: h, N: n}
	groups, threads := kernels.EmbedGrid(h, n)
	run(t, d, p, groups, threads,
		binding{index: 0, buf: tokBuf}, binding{index: 1, buf: wBuf}, binding{index: 2, buf: xBuf}, binding{index: 3, bytes: device.StructBytes(&prm)})
	x := device.View[float32](xBuf)
	for tk := 0; tk < n; tk++ {
		for o := 0; o < h; o++ {
			ref := float64(w[h*64+o])
			mag := math.Abs(ref)
			for c := 0; c < 64; c++ {
				ref += float64(tok[tk*64+c]) * float64(w[o*64+c])
				mag += math.Abs(float64(tok[tk*64+c]) * float64(w[o*64+c]))
			}
			bound := 1.01 * 65 * math.Ldexp(1, -24) * mag // 64 fused multiply-adds
			if got := float64(x[tk*h+o]); !(math.Abs(got-ref) <= bound) {
				t.Fatalf("x[%d][%d] = %v, reference %v: error %.3g over the bound %.3g", tk, o, got, ref, math.Abs(got-ref), bound)
			}
		}
	}
}

func TestEmuFinal(t *testing.T) {
	const h, rows, row0, n = 1000, 6, 1, 4
	d := newDevice(t, emu.Shuffled)
	p := pipeline(t, d, "final.metal", "qi_final")
	rng := rand.New(rand.NewPCG(12, 13))
	xBuf, x := floatBuffer(t, d, rows*h, func() float64 { return -2 + rng.NormFloat64()*3 })
	fsBuf, fs := floatBuffer(t, d, h, func() float64 { return 1 + rng.NormFloat64()*0.2 })
	pBuf, pw := floatBuffer(t, d, 64*h+64, func() float64 { return rng.NormFloat64() * 0.05 })
	outBuf := newBuffer(t, d, 4*rows*64)
	prm := kernels.FinalParams{H: h, Row0: row0, Eps: 1e-6}
	groups, threads := kernels.FinalGrid(n)
	run(t, d, p, groups, threads,
		binding{index: 0, buf: xBuf}, binding{index: 1, buf: fsBuf}, binding{index: 2, buf: pBuf},
		binding{index: 3, buf: outBuf}, binding{index: 4, bytes: device.StructBytes(&prm)})
	out := device.View[float32](outBuf)
	u := math.Ldexp(1, -24)
	for g := 0; g < rows; g++ {
		if g >= n {
			for c := 0; c < 64; c++ {
				if out[g*64+c] != 0 {
					t.Fatalf("out[%d][%d] written past the rows", g, c)
				}
			}
			continue
		}
		row := x[(row0+g)*h : (row0+g+1)*h]
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
		// y's error as in TestEmuRowOp (mean, variance, rsqrt, three products), then a float dot
		// product of h terms and the bias.
		dMean := float64(h+1) * u * sumAbs / h
		relInv := 0.5*(float64(h+3)*u+dMean*dMean/(sigma*sigma)) + 2*u
		y := make([]float64, h)
		dy := make([]float64, h)
		for i, v := range row {
			dv := float64(v) - mean
			y[i] = dv / sigma * float64(fs[i])
			dy[i] = math.Abs(float64(fs[i])) / sigma * (dMean + math.Abs(dv)*(relInv+4*u))
		}
		for c := 0; c < 64; c++ {
			ref := float64(pw[64*h+c])
			mag, prop := math.Abs(ref), 0.0
			for i := 0; i < h; i++ {
				wv := float64(pw[c*h+i])
				ref += y[i] * wv
				mag += math.Abs(y[i] * wv)
				prop += math.Abs(wv) * dy[i]
			}
			bound := 1.01 * (prop + float64(h+2)*u*mag)
			if got := float64(out[g*64+c]); !(math.Abs(got-ref) <= bound) {
				t.Fatalf("out[%d][%d] = %v, reference %v: error %.3g over the bound %.3g", g, c, got, ref, math.Abs(got-ref), bound)
			}
		}
	}
}
