package metalops

import (
	"math"
	"math/rand/v2"
	"testing"

	"easel/engine/ml"
	"easel/engine/ml/cpu"
	"easel/engine/quant"
	"easel/internal/golden"
	"easel/internal/testdevice"
	"easel/kernels/emu"
)

// Every op against the CPU backend on random data, at shapes that cross the 64-wide tiles'
// edges. The matrix products stage half operands (unit roundoff 4.9e-4) over reductions of up to
// 200 terms: measured 2.1e-4…4.1e-4 relative, bound 2e-3. The float ops differ from the CPU's
// only in summation order and float-vs-double statistics: measured ≤ 8e-8, bound 1e-6.
const (
	halfBound  = 2e-3
	floatBound = 1e-6
)

func pair(t *testing.T) (*Backend, *cpu.Backend) {
	t.Helper()
	d := testdevice.Device(t, emu.Options{})
	b, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b, cpu.New()
}

func random(r *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * scale)
	}
	return v
}

// both uploads the same data to the device and the CPU.
func both(t *testing.T, b *Backend, c *cpu.Backend, data []float32, shape ...int) (ml.Tensor, ml.Tensor) {
	t.Helper()
	x, err := b.Upload(data, shape...)
	if err != nil {
		t.Fatal(err)
	}
	y, err := c.Upload(data, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x, y
}

func compare(t *testing.T, what string, b *Backend, c *cpu.Backend, got, want ml.Tensor, bound float64) {
	t.Helper()
	g, err := b.Download(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Download(want)
	if err != nil {
		t.Fatal(err)
	}
	rel := golden.RelErr(g, w)
	t.Logf("%s: relative error %.2e", what, rel)
	if !(rel <= bound) || math.IsNaN(rel) {
		t.Errorf("%s: relative error %.3e exceeds %.0e", what, rel, bound)
	}
}

func TestEmuLinearMatchesCPU(t *testing.T) {
	b, c := pair(t)
	r := rand.New(rand.NewPCG(1, 2))
	const n, in, out = 70, 200, 90
	x, xc := both(t, b, c, random(r, n*in, 1), n, in)
	for _, d := range []quant.DType{quant.Q8_2F, quant.Q8Row, quant.F16, quant.F32} {
		payload, err := quant.Encode(d, []int{out, in}, random(r, out*in, 0.1))
		if err != nil {
			t.Fatal(err)
		}
		w := &quant.Tensor{Name: "w." + d.String(), DType: d, Shape: []int{out, in}, Data: payload}
		y, _ := b.New(n, out)
		yc, _ := c.New(n, out)
		if err := b.Linear(y, x, w); err != nil {
			t.Fatal(err)
		}
		if err := c.Linear(yc, xc, w); err != nil {
			t.Fatal(err)
		}
		compare(t, "Linear "+d.String(), b, c, y, yc, halfBound)
	}
}

func TestEmuAttentionMatchesCPU(t *testing.T) {
	b, c := pair(t)
	r := rand.New(rand.NewPCG(3, 4))
	defer func(v int) { scoreBytes = v }(scoreBytes)
	for _, tc := range []struct {
		name            string
		heads, kv, hd   int
		n, prefix       int
		causal, chunked bool
	}{
		{"one head, no mask (the VAE's mid block)", 1, 1, 96, 100, 0, false, false},
		{"GQA causal (the language model)", 4, 2, 64, 75, 0, true, false},
		{"GQA causal in chunks of 64 queries", 4, 2, 64, 150, 0, true, true},
		{"prefix keys with causal visibility, in chunks", 2, 1, 32, 40, 30, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scoreBytes = 64 << 20
			if tc.chunked {
				scoreBytes = 4 * tc.heads * 64 * (tc.n + tc.prefix) // one 64-row chunk at a time
			}
			qw, kw := tc.heads*tc.hd, tc.kv*tc.hd
			q, qc := both(t, b, c, random(r, tc.n*qw, 1), tc.n, qw)
			k, kc := both(t, b, c, random(r, tc.n*kw, 1), tc.n, kw)
			v, vc := both(t, b, c, random(r, tc.n*kw, 1), tc.n, kw)
			var pk, pv, pkc, pvc ml.Tensor
			if tc.prefix > 0 {
				pk, pkc = both(t, b, c, random(r, tc.prefix*kw, 1), tc.prefix, kw)
				pv, pvc = both(t, b, c, random(r, tc.prefix*kw, 1), tc.prefix, kw)
			}
			spec := ml.AttnSpec{Heads: tc.heads, KVHeads: tc.kv, HeadDim: tc.hd, Scale: float32(1 / math.Sqrt(float64(tc.hd)))}
			if tc.causal {
				spec.Visible = ml.CausalVisibility(tc.prefix, tc.n)
			}
			d, _ := b.New(tc.n, qw)
			dc, _ := c.New(tc.n, qw)
			if err := b.Attention(d, q, k, v, pk, pv, spec); err != nil {
				t.Fatal(err)
			}
			if err := c.Attention(dc, qc, kc, vc, pkc, pvc, spec); err != nil {
				t.Fatal(err)
			}
			compare(t, "Attention", b, c, d, dc, halfBound)
		})
	}
}

func TestEmuNormsRopeActivationsMatchCPU(t *testing.T) {
	b, c := pair(t)
	r := rand.New(rand.NewPCG(5, 6))
	const rows, cols = 37, 300
	x, xc := both(t, b, c, random(r, rows*cols, 2), rows, cols)
	w, wc := both(t, b, c, random(r, cols, 1), cols)
	bias, biasc := both(t, b, c, random(r, cols, 1), cols)
	for _, zc := range []bool{false, true} {
		y, _ := b.New(rows, cols)
		yc, _ := c.New(rows, cols)
		if err := b.RMSNorm(y, x, w, 1e-6, zc); err != nil {
			t.Fatal(err)
		}
		if err := c.RMSNorm(yc, xc, wc, 1e-6, zc); err != nil {
			t.Fatal(err)
		}
		compare(t, "RMSNorm", b, c, y, yc, floatBound)
	}
	y, _ := b.New(rows, cols)
	yc, _ := c.New(rows, cols)
	if err := b.LayerNorm(y, x, w, bias, 1e-6); err != nil {
		t.Fatal(err)
	}
	if err := c.LayerNorm(yc, xc, wc, biasc, 1e-6); err != nil {
		t.Fatal(err)
	}
	compare(t, "LayerNorm", b, c, y, yc, floatBound)

	const heads, hd = 3, 20
	for _, pairs := range []ml.RopePairs{ml.Interleaved, ml.HalfSplit} {
		data := random(r, rows*heads*hd, 1)
		h, hc := both(t, b, c, data, rows, heads*hd)
		hw, hwc := both(t, b, c, random(r, hd, 1), hd)
		cosT, sinT := make([]float32, rows*hd/2), make([]float32, rows*hd/2)
		for i := range cosT {
			a := r.Float64() * 6
			cosT[i], sinT[i] = float32(math.Cos(a)), float32(math.Sin(a))
		}
		cs, csc := both(t, b, c, cosT, rows, hd/2)
		sn, snc := both(t, b, c, sinT, rows, hd/2)
		if err := b.HeadNormRoPE(h, heads, hd, hw, 1e-6, &ml.Rope{Cos: cs, Sin: sn, Pairs: pairs}); err != nil {
			t.Fatal(err)
		}
		if err := c.HeadNormRoPE(hc, heads, hd, hwc, 1e-6, &ml.Rope{Cos: csc, Sin: snc, Pairs: pairs}); err != nil {
			t.Fatal(err)
		}
		compare(t, "HeadNormRoPE", b, c, h, hc, floatBound)
	}

	g, gc := both(t, b, c, random(r, rows*cols, 2), rows, cols)
	for _, op := range []struct {
		name string
		dev  func(dst ml.Tensor) error
		host func(dst ml.Tensor) error
	}{
		{"GELUTanh", func(d ml.Tensor) error { return b.GELUTanh(d, x) }, func(d ml.Tensor) error { return c.GELUTanh(d, xc) }},
		{"SwiGLU", func(d ml.Tensor) error { return b.SwiGLU(d, g, x) }, func(d ml.Tensor) error { return c.SwiGLU(d, gc, xc) }},
		{"SiLU", func(d ml.Tensor) error { return b.SiLU(d, x) }, func(d ml.Tensor) error { return c.SiLU(d, xc) }},
		{"Add of a row", func(d ml.Tensor) error { return b.Add(d, x, w) }, func(d ml.Tensor) error { return c.Add(d, xc, wc) }},
		{"Mul", func(d ml.Tensor) error { return b.Mul(d, x, g) }, func(d ml.Tensor) error { return c.Mul(d, xc, gc) }},
	} {
		y, _ := b.New(rows, cols)
		yc, _ := c.New(rows, cols)
		if err := op.dev(y); err != nil {
			t.Fatal(err)
		}
		if err := op.host(yc); err != nil {
			t.Fatal(err)
		}
		compare(t, op.name, b, c, y, yc, floatBound)
	}
}

// Inputs past half's range (65504) go through the power-of-two guard: a linear layer and a
// convolution over values of ±1e6 match the CPU as closely as ordinary ones, where staging them
// unguarded would give infinities.
func TestEmuGuardKeepsLargeInputsFinite(t *testing.T) {
	b, c := pair(t)
	r := rand.New(rand.NewPCG(7, 8))
	const n, in, out = 20, 64, 70
	x, xc := both(t, b, c, random(r, n*in, 1e6), n, in)
	payload, err := quant.Encode(quant.F16, []int{out, in}, random(r, out*in, 0.1))
	if err != nil {
		t.Fatal(err)
	}
	w := &quant.Tensor{Name: "w", DType: quant.F16, Shape: []int{out, in}, Data: payload}
	y, _ := b.New(n, out)
	yc, _ := c.New(n, out)
	if err := b.Linear(y, x, w); err != nil {
		t.Fatal(err)
	}
	if err := c.Linear(yc, xc, w); err != nil {
		t.Fatal(err)
	}
	compare(t, "Linear of ±1e6 inputs", b, c, y, yc, halfBound)

	const ch, h, wd, oc = 5, 9, 11, 7
	img, imgc := both(t, b, c, random(r, ch*h*wd, 1e6), ch, h, wd)
	kp, err := quant.Encode(quant.F16, []int{oc, ch, 3, 3}, random(r, oc*ch*9, 0.1))
	if err != nil {
		t.Fatal(err)
	}
	kw := &quant.Tensor{Name: "k", DType: quant.F16, Shape: []int{oc, ch, 3, 3}, Data: kp}
	bias, biasc := both(t, b, c, random(r, oc, 1), oc)
	for _, spec := range []ml.ConvSpec{ml.SamePad(1), {Stride: 2, PadBottom: 1, PadRight: 1}} {
		oh := (h+spec.PadTop+spec.PadBottom-3)/spec.Stride + 1
		ow := (wd+spec.PadLeft+spec.PadRight-3)/spec.Stride + 1
		z, _ := b.New(oc, oh, ow)
		zc, _ := c.New(oc, oh, ow)
		if err := b.Conv2D(z, img, kw, bias, spec); err != nil {
			t.Fatal(err)
		}
		if err := c.Conv2D(zc, imgc, kw, biasc, spec); err != nil {
			t.Fatal(err)
		}
		compare(t, "Conv2D of ±1e6 inputs", b, c, z, zc, halfBound)
	}
}

// In profiling mode every run of one class's ops gets its own command buffer and its GPU time
// goes to that class; the results are the same bits as without it, and without it no class is
// timed.
func TestEmuProfilingTimesEachClass(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const n, in, out = 30, 40, 50
	xs := random(r, n*in, 1)
	payload, err := quant.Encode(quant.Q8_2F, []int{out, in}, random(r, out*in, 0.1))
	if err != nil {
		t.Fatal(err)
	}
	w := &quant.Tensor{Name: "w", DType: quant.Q8_2F, Shape: []int{out, in}, Data: payload}
	var results [2][]float32
	for i, profile := range []bool{false, true} {
		b, _ := pair(t)
		b.SetProfile(profile)
		x, err := b.Upload(xs, n, in)
		if err != nil {
			t.Fatal(err)
		}
		y, _ := b.New(n, out)
		z, _ := b.New(n, out)
		if err := b.Linear(y, x, w); err != nil {
			t.Fatal(err)
		}
		if err := b.RMSNorm(z, y, nil, 1e-6, false); err != nil {
			t.Fatal(err)
		}
		if err := b.Attention(y, z, z, z, nil, nil, ml.AttnSpec{Heads: 1, KVHeads: 1, HeadDim: out, Scale: 0.1}); err != nil {
			t.Fatal(err)
		}
		if results[i], err = b.Download(y); err != nil {
			t.Fatal(err)
		}
		tm := b.Timings().Snapshot()
		for _, c := range []ml.Class{ml.ClassGemm, ml.ClassNorm, ml.ClassAttn} {
			if timed := tm[c].Time > 0 && tm[c].Ops > 0; timed != profile {
				t.Errorf("profiling %v: class %s timed %v (%v over %d command buffers)", profile, c, timed, tm[c].Time, tm[c].Ops)
			}
		}
	}
	if golden.RelErr(results[1], results[0]) != 0 {
		t.Error("profiling changed the results")
	}
}
