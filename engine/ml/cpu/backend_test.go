package cpu

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"easel/engine/ml"
	"easel/engine/quant"
)

// These tests compare each op with a direct float64 loop written from the op's definition.

// inBothModes runs a test with this build's threading and, where BLAS is single-threaded, also
// with one multi-threaded BLAS call at a time (the path Accelerate builds take).
func inBothModes(t *testing.T, test func(t *testing.T)) {
	t.Run("build", test)
	if blasParallel {
		return
	}
	t.Run("blas-parallel", func(t *testing.T) {
		blasParallel = true
		setBLASThreads(runtime.GOMAXPROCS(0))
		defer func() {
			blasParallel = false
			setBLASThreads(1)
		}()
		test(t)
	})
}

func randSlice(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

func relErr(got []float32, want []float64) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

func upload(t *testing.T, b *Backend, data []float32, shape ...int) ml.Tensor {
	t.Helper()
	x, err := b.Upload(data, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func download(t *testing.T, b *Backend, x ml.Tensor) []float32 {
	t.Helper()
	v, err := b.Download(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// weight encodes w [rows, cols] in codec d and returns it with the values its payload decodes to.
func weight(t *testing.T, name string, d quant.DType, w []float32, rows, cols int) (*quant.Tensor, []float32) {
	t.Helper()
	data, err := quant.Encode(d, []int{rows, cols}, w)
	if err != nil {
		t.Fatal(err)
	}
	wt := &quant.Tensor{Name: name, DType: d, Shape: []int{rows, cols}, Data: data}
	exact, err := quant.Dequantize(wt)
	if err != nil {
		t.Fatal(err)
	}
	return wt, exact
}

func TestLinearMatchesDefinition(t *testing.T) {
	inBothModes(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		b := New()
		b.tileRows = 48 // several tiles, one partial
		for i, d := range []quant.DType{quant.F32, quant.BF16, quant.F16, quant.Q8Row, quant.Q8_2F, quant.Q4TP} {
			n, in, out := 7, 96, 130
			if i%2 == 1 {
				n = pipelineMinRows + 3 // the pipelined path
			}
			x := randSlice(rng, n*in)
			w, exact := weight(t, "w", d, randSlice(rng, out*in), out, in)
			dst, _ := b.New(n, out)
			if err := b.Linear(dst, upload(t, b, x, n, in), w); err != nil {
				t.Fatal(err)
			}
			want := make([]float64, n*out)
			for i := 0; i < n; i++ {
				for o := 0; o < out; o++ {
					for k := 0; k < in; k++ {
						want[i*out+o] += float64(x[i*in+k]) * float64(exact[o*in+k])
					}
				}
			}
			if e := relErr(download(t, b, dst), want); e > 1e-6 {
				t.Errorf("%v: relative error %.3g", d, e)
			}
		}
	})
}

// TestLinearSkinnyWeightSplitsRows: a weight of fewer rows than one tile (a LoRA's down factor)
// over many input rows, where each tile's input rows are split between cores: the same result as
// the definition, every row written.
func TestLinearSkinnyWeightSplitsRows(t *testing.T) {
	inBothModes(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		b := New()
		for _, c := range []struct{ n, in, out int }{{4*splitMinRows + 5, 96, 7}, {2 * splitMinRows, 64, 1}, {splitMinRows, 32, 3}} {
			x := randSlice(rng, c.n*c.in)
			w, exact := weight(t, "a", quant.BF16, randSlice(rng, c.out*c.in), c.out, c.in)
			dst, _ := b.New(c.n, c.out)
			if err := b.Linear(dst, upload(t, b, x, c.n, c.in), w); err != nil {
				t.Fatal(err)
			}
			want := make([]float64, c.n*c.out)
			for i := 0; i < c.n; i++ {
				for o := 0; o < c.out; o++ {
					for k := 0; k < c.in; k++ {
						want[i*c.out+o] += float64(x[i*c.in+k]) * float64(exact[o*c.in+k])
					}
				}
			}
			if e := relErr(download(t, b, dst), want); e > 1e-6 {
				t.Errorf("%d×%d by %d rows: relative error %.3g", c.out, c.in, c.n, e)
			}
		}
	})
}

func TestLinearRejectsMismatchedShapes(t *testing.T) {
	b := New()
	w, _ := weight(t, "w", quant.F32, make([]float32, 6), 2, 3)
	w.Data = append([]byte(nil), w.Data...)
	x, _ := b.New(4, 5)
	dst, _ := b.New(4, 2)
	if err := b.Linear(dst, x, w); err == nil {
		t.Fatal("a [4,5] input was accepted for a [2,3] weight")
	}
	w.Data = w.Data[:8]
	x, _ = b.New(4, 3)
	if err := b.Linear(dst, x, w); err == nil {
		t.Fatal("a truncated weight payload was accepted")
	}
}

func TestGoSgemmMatchesBlas(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, transB := range []bool{false, true} {
		m, n, k := 13, 17, 29
		a := randSlice(rng, m*k)
		bb := randSlice(rng, n*k)
		c1 := randSlice(rng, m*n)
		c2 := append([]float32(nil), c1...)
		ldb := n
		if transB {
			ldb = k
		}
		sgemm(transB, m, n, k, 0.5, a, k, bb, ldb, 0.25, c1, n)
		goSgemm(transB, m, n, k, 0.5, a, k, bb, ldb, 0.25, c2, n)
		want := make([]float64, len(c2))
		for i := range c2 {
			want[i] = float64(c2[i])
		}
		if e := relErr(c1, want); e > 1e-6 {
			t.Errorf("transB=%v: %s and the Go GEMM differ by %.3g", transB, blasName, e)
		}
	}
}

func TestAttentionWithPrefixAndVisibility(t *testing.T) {
	inBothModes(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		b := New()
		H, KVH, hd, lp, n := 4, 2, 8, 5, 6
		m := lp + n
		q := randSlice(rng, n*H*hd)
		k := randSlice(rng, m*KVH*hd)
		v := randSlice(rng, m*KVH*hd)
		vis := []int32{6, 7, 11, 11, 9, 11}
		for _, visible := range [][]int32{nil, vis} {
			dst, _ := b.New(n, H*hd)
			spec := ml.AttnSpec{Heads: H, KVHeads: KVH, HeadDim: hd, Scale: 0.3, Visible: visible}
			err := b.Attention(dst, upload(t, b, q, n, H*hd),
				upload(t, b, k[lp*KVH*hd:], n, KVH*hd), upload(t, b, v[lp*KVH*hd:], n, KVH*hd),
				upload(t, b, k[:lp*KVH*hd], lp, KVH*hd), upload(t, b, v[:lp*KVH*hd], lp, KVH*hd), spec)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float64, n*H*hd)
			for h := 0; h < H; h++ {
				g := h / (H / KVH)
				for i := 0; i < n; i++ {
					limit := m
					if visible != nil {
						limit = int(visible[i])
					}
					s := make([]float64, limit)
					mx := math.Inf(-1)
					for j := range s {
						for d := 0; d < hd; d++ {
							s[j] += float64(q[(i*H+h)*hd+d]) * float64(k[(j*KVH+g)*hd+d])
						}
						s[j] *= 0.3
						mx = math.Max(mx, s[j])
					}
					sum := 0.0
					for j := range s {
						s[j] = math.Exp(s[j] - mx)
						sum += s[j]
					}
					for j := range s {
						for d := 0; d < hd; d++ {
							want[(i*H+h)*hd+d] += s[j] / sum * float64(v[(j*KVH+g)*hd+d])
						}
					}
				}
			}
			if e := relErr(download(t, b, dst), want); e > 1e-6 {
				t.Errorf("visible=%v: relative error %.3g", visible, e)
			}
		}
	})
}

func TestHeadNormRoPE(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	b := New()
	rows, H, hd := 3, 2, 8
	half := hd / 2
	x := randSlice(rng, rows*H*hd)
	w := randSlice(rng, hd)
	cos, sin := make([]float32, rows*half), make([]float32, rows*half)
	for i := range cos {
		a := rng.Float64() * 6
		cos[i], sin[i] = float32(math.Cos(a)), float32(math.Sin(a))
	}
	for _, pairs := range []ml.RopePairs{ml.Interleaved, ml.HalfSplit} {
		xt := upload(t, b, x, rows, H*hd)
		rope := &ml.Rope{Cos: upload(t, b, cos, rows, half), Sin: upload(t, b, sin, rows, half), Pairs: pairs}
		if err := b.HeadNormRoPE(xt, H, hd, upload(t, b, w, hd), 1e-6, rope); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, len(x))
		for r := 0; r < rows; r++ {
			for h := 0; h < H; h++ {
				o := (r*H + h) * hd
				ss := 0.0
				for d := 0; d < hd; d++ {
					ss += float64(x[o+d]) * float64(x[o+d])
				}
				inv := 1 / math.Sqrt(ss/float64(hd)+1e-6)
				nv := make([]float64, hd)
				for d := range nv {
					nv[d] = float64(x[o+d]) * inv * float64(w[d])
				}
				for p := 0; p < half; p++ {
					i, j := 2*p, 2*p+1
					if pairs == ml.HalfSplit {
						i, j = p, p+half
					}
					c, s := float64(cos[r*half+p]), float64(sin[r*half+p])
					want[o+i] = nv[i]*c - nv[j]*s
					want[o+j] = nv[i]*s + nv[j]*c
				}
			}
		}
		if e := relErr(download(t, b, xt), want); e > 1e-6 {
			t.Errorf("pairs %d: relative error %.3g", pairs, e)
		}
	}
}

func TestGatedResidualModNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	b := New()
	rows, D := 5, 16
	x, y, g, s := randSlice(rng, rows*D), randSlice(rng, rows*D), randSlice(rng, D), randSlice(rng, D)
	xt := upload(t, b, x, rows, D)
	dst, _ := b.New(rows, D)
	if err := b.GatedResidualModNorm(xt, upload(t, b, y, rows, D), upload(t, b, g, D), dst, upload(t, b, s, D), 1e-6); err != nil {
		t.Fatal(err)
	}
	wantX := make([]float64, rows*D)
	wantN := make([]float64, rows*D)
	for r := 0; r < rows; r++ {
		mean := 0.0
		for i := 0; i < D; i++ {
			wantX[r*D+i] = float64(x[r*D+i]) + math.Tanh(float64(g[i]))*float64(y[r*D+i])
			mean += wantX[r*D+i] / float64(D)
		}
		variance := 0.0
		for i := 0; i < D; i++ {
			variance += (wantX[r*D+i] - mean) * (wantX[r*D+i] - mean) / float64(D)
		}
		for i := 0; i < D; i++ {
			wantN[r*D+i] = (wantX[r*D+i] - mean) / math.Sqrt(variance+1e-6) * (1 + float64(s[i]))
		}
	}
	if e := relErr(download(t, b, xt), wantX); e > 1e-6 {
		t.Errorf("residual: relative error %.3g", e)
	}
	if e := relErr(download(t, b, dst), wantN); e > 1e-6 {
		t.Errorf("modulated norm: relative error %.3g", e)
	}
}

func TestConv2D(t *testing.T) {
	inBothModes(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		b := New()
		b.tileRows = 3
		inC, H, W, outC, k := 3, 7, 6, 5, 3
		x := randSlice(rng, inC*H*W)
		wq, w := weight(t, "conv", quant.F32, randSlice(rng, outC*inC*k*k), outC, inC*k*k)
		wq.Shape = []int{outC, inC, k, k}
		bias := randSlice(rng, outC)
		for _, spec := range []ml.ConvSpec{ml.SamePad(1), {Stride: 2, PadBottom: 1, PadRight: 1}} {
			oh := (H+spec.PadTop+spec.PadBottom-k)/spec.Stride + 1
			ow := (W+spec.PadLeft+spec.PadRight-k)/spec.Stride + 1
			dst, _ := b.New(outC, oh, ow)
			if err := b.Conv2D(dst, upload(t, b, x, inC, H, W), wq, upload(t, b, bias, outC), spec); err != nil {
				t.Fatal(err)
			}
			want := make([]float64, outC*oh*ow)
			for o := 0; o < outC; o++ {
				for oy := 0; oy < oh; oy++ {
					for ox := 0; ox < ow; ox++ {
						acc := float64(bias[o])
						for c := 0; c < inC; c++ {
							for ky := 0; ky < k; ky++ {
								for kx := 0; kx < k; kx++ {
									iy, ix := oy*spec.Stride+ky-spec.PadTop, ox*spec.Stride+kx-spec.PadLeft
									if iy >= 0 && iy < H && ix >= 0 && ix < W {
										acc += float64(x[(c*H+iy)*W+ix]) * float64(w[((o*inC+c)*k+ky)*k+kx])
									}
								}
							}
						}
						want[(o*oh+oy)*ow+ox] = acc
					}
				}
			}
			if e := relErr(download(t, b, dst), want); e > 1e-6 {
				t.Errorf("%+v: relative error %.3g", spec, e)
			}
		}
	})
}

func TestForeignAndNilTensorsAreErrors(t *testing.T) {
	b := New()
	x, _ := b.New(2, 4)
	if err := b.SiLU(nil, x); err == nil {
		t.Error("nil destination accepted")
	}
	if err := b.Add(x, x, upload(t, b, []float32{1, 2, 3}, 3)); err == nil {
		t.Error("a 3-wide row broadcast over 4-wide rows was accepted")
	}
	if _, err := b.Slice(x, 6, 2, 2); err == nil {
		t.Error("a view past the end was accepted")
	}
}

func TestActivationsAndBroadcast(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	b := New()
	rows, D := 3, 40000 // several parallel chunks
	g, u, r := randSlice(rng, rows*D), randSlice(rng, rows*D), randSlice(rng, D)
	check := func(name string, got []float32, f func(i int) float64) {
		want := make([]float64, len(got))
		for i := range want {
			want[i] = f(i)
		}
		if e := relErr(got, want); e > 1e-6 {
			t.Errorf("%s: relative error %.3g", name, e)
		}
	}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	dst, _ := b.New(rows, D)
	if err := b.SwiGLU(dst, upload(t, b, g, rows, D), upload(t, b, u, rows, D)); err != nil {
		t.Fatal(err)
	}
	check("SwiGLU", download(t, b, dst), func(i int) float64 { x := float64(g[i]); return x * sig(x) * float64(u[i]) })
	if err := b.GELUTanh(dst, upload(t, b, g, rows, D)); err != nil {
		t.Fatal(err)
	}
	check("GELUTanh", download(t, b, dst), func(i int) float64 {
		x := float64(g[i])
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	})
	if err := b.Mul(dst, upload(t, b, u, rows, D), upload(t, b, r, D)); err != nil {
		t.Fatal(err)
	}
	check("Mul broadcast", download(t, b, dst), func(i int) float64 { return float64(u[i]) * float64(r[i%D]) })
}
