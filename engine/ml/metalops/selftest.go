package metalops

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"easel/engine/ml"
	"easel/engine/ml/cpu"
	"easel/engine/ml/metal"
	"easel/engine/quant"
	"easel/kernels/device"
)

// The text encoder's, the vision tower's and the VAE's slice of the first-use self-test: every
// kernel of ops.metal and vae.metal on a small random input, on the device and on the CPU
// backend. Bounds: the ops that stage half operands get the emulator tests' 2e-3 (ops_test.go:
// measured 2.1e-4…4.7e-4); the float ops get 1e-4, not the emulator's 1e-6, because Metal's
// fast math (rsqrt, exp, tanh approximations) is not the emulator's libm — still a hundred times
// below what a wrong kernel gives (the emulator's corrupt-gemm fault: above 1e-2).
const (
	selfTestHalfBound  = 2e-3
	selfTestFloatBound = 1e-4
)

// opRun computes an op on a backend; up uploads a named input (the same data on both sides).
type opRun func(b ml.Backend, up func(data []float32, shape ...int) (ml.Tensor, error)) (ml.Tensor, error)

// SelfTestChecks is this backend's self-test slice. The device backend is compiled once, by the
// first check that runs, and closed by done.
func SelfTestChecks() (checks []metal.KernelCheck, done func()) {
	var dev *Backend
	var devErr error
	var made bool
	te, vae := metal.StageTextEncoder, metal.StageVAE
	both := []string{te, vae}
	check := func(kernel string, stages []string, bound float64, seed uint64, run opRun) metal.KernelCheck {
		return metal.KernelCheck{Kernel: kernel, Stages: stages, Bound: bound,
			Run: func(ctx context.Context, d device.Device) ([]float32, []float32, error) {
				if !made {
					made = true
					dev, devErr = New(d)
				}
				if devErr != nil {
					return nil, nil, devErr
				}
				got, err := runOp(dev, seed, run)
				if err != nil {
					return nil, nil, err
				}
				c := cpu.New()
				want, err := runOp(c, seed, run)
				if err != nil {
					return nil, nil, fmt.Errorf("the CPU reference: %w", err)
				}
				return got, want, nil
			}}
	}
	linear := func(dt quant.DType) opRun {
		return func(b ml.Backend, up func([]float32, ...int) (ml.Tensor, error)) (ml.Tensor, error) {
			const n, in, out = 70, 96, 72
			x, err := up(nil, n, in)
			if err != nil {
				return nil, err
			}
			payload, err := quant.Encode(dt, []int{out, in}, randoms(rand.New(rand.NewPCG(11, uint64(dt))), out*in, 0.1))
			if err != nil {
				return nil, err
			}
			y, err := b.New(n, out)
			if err != nil {
				return nil, err
			}
			return y, b.Linear(y, x, &quant.Tensor{Name: "selftest." + dt.String(), DType: dt, Shape: []int{out, in}, Data: payload})
		}
	}
	checks = []metal.KernelCheck{
		check("ops_linear (q8_2f) + vae_amax", both, selfTestHalfBound, 1, linear(quant.Q8_2F)),
		check("ops_linear (q8_row)", both, selfTestHalfBound, 2, linear(quant.Q8Row)),
		check("ops_linear (f16)", both, selfTestHalfBound, 3, linear(quant.F16)),
		check("ops_mm + ops_softmax (attention)", both, selfTestHalfBound, 4, func(b ml.Backend, up func([]float32, ...int) (ml.Tensor, error)) (ml.Tensor, error) {
			const heads, kv, hd, n = 4, 2, 64, 75
			q, err := up(nil, n, heads*hd)
			if err != nil {
				return nil, err
			}
			k, err := up(nil, n, kv*hd)
			if err != nil {
				return nil, err
			}
			v, err := up(nil, n, kv*hd)
			if err != nil {
				return nil, err
			}
			d, err := b.New(n, heads*hd)
			if err != nil {
				return nil, err
			}
			spec := ml.AttnSpec{Heads: heads, KVHeads: kv, HeadDim: hd, Scale: float32(1 / math.Sqrt(hd)), Visible: ml.CausalVisibility(0, n)}
			return d, b.Attention(d, q, k, v, nil, nil, spec)
		}),
		check("ops_rownorm (RMSNorm)", []string{te}, selfTestFloatBound, 5, func(b ml.Backend, up func([]float32, ...int) (ml.Tensor, error)) (ml.Tensor, error) {
			x, w, err := rowsAndGain(up)
			if err != nil {
				return nil, err
			}
			y, err := b.New(37, 300)
			if err != nil {
				return nil, err
			}
			return y, b.RMSNorm(y, x, w, 1e-6, false)
		}),
		check("ops_rownorm (LayerNorm)", []string{te}, selfTestFloatBound, 6, func(b ml.Backend, up func([]float32, ...int) (ml.Tensor, error)) (ml.Tensor, error) {
			x, w, err := rowsAndGain(up)
			if err != nil {
				return nil, err
			}
			bias, err := up(nil, 300)
			if err != nil {
				return nil, err
			}
			y, err := b.New(37, 300)
			if err != nil {
				return nil, err
			}
			return y, b.LayerNorm(y, x, w, bias, 1e-6)
		}),
		check("ops_headrope", []string{te}, selfTestFloatBound, 7, func(b ml.Backend, up func([]float32, ...int) (ml.Tensor, error)) (ml.Tensor, error) {
			const rows, heads, hd = 37, 3, 20
			h, err := up(nil, rows, heads*hd)
			if err != nil {
				return nil, err
			}
			w, err := up(nil, hd)
			if err != nil {
				return nil, err
			}
			cosT, sinT := make([]float32, rows*hd/2), make([]float32, rows*hd/2)
			for i := range cosT {
				a := float64(i%97) * 0.07
				cosT[i], sinT[i] = float32(math.Cos(a)), float32(math.Sin(a))
			}
			cs, err := up(cosT, rows, hd/2)
			if err != nil {
				return nil, err
			}
			sn, err := up(sinT, rows, hd/2)
			if err != nil {
				return nil, err
			}
			return h, b.HeadNormRoPE(h, heads, hd, w, 1e-6, &ml.Rope{Cos: cs, Sin: sn, Pairs: ml.HalfSplit})
		}),
		check("vae_conv + vae_amax (3×3 convolution)", []string{vae}, selfTestHalfBound, 8, func(b ml.Backend, up func([]float32, ...int) (ml.Tensor, error)) (ml.Tensor, error) {
			const ch, h, wd, oc = 5, 9, 11, 7
			img, err := up(nil, ch, h, wd)
			if err != nil {
				return nil, err
			}
			kp, err := quant.Encode(quant.F16, []int{oc, ch, 3, 3}, randoms(rand.New(rand.NewPCG(13, 14)), oc*ch*9, 0.1))
			if err != nil {
				return nil, err
			}
			bias, err := up(nil, oc)
			if err != nil {
				return nil, err
			}
			z, err := b.New(oc, h, wd)
			if err != nil {
				return nil, err
			}
			return z, b.Conv2D(z, img, &quant.Tensor{Name: "selftest.conv", DType: quant.F16, Shape: []int{oc, ch, 3, 3}, Data: kp}, bias, ml.SamePad(1))
		}),
		check("vae_chnorm", []string{vae}, selfTestFloatBound, 9, func(b ml.Backend, up func([]float32, ...int) (ml.Tensor, error)) (ml.Tensor, error) {
			x, err := up(nil, 6, 5, 7)
			if err != nil {
				return nil, err
			}
			g, err := up(nil, 6)
			if err != nil {
				return nil, err
			}
			y, err := b.New(6, 5, 7)
			if err != nil {
				return nil, err
			}
			cn, ok := b.(interface {
				ChannelRMSNorm(dst, x, gamma ml.Tensor, eps float32) error
			})
			if !ok {
				return nil, fmt.Errorf("%s has no channel RMSNorm", b.Name())
			}
			return y, cn.ChannelRMSNorm(y, x, g, 1e-6)
		}),
		check("vae_elt (SiLU, GELU-tanh, SwiGLU, Add, Mul)", both, selfTestFloatBound, 10, func(b ml.Backend, up func([]float32, ...int) (ml.Tensor, error)) (ml.Tensor, error) {
			const rows, cols = 17, 64
			x, err := up(nil, rows, cols)
			if err != nil {
				return nil, err
			}
			g, err := up(nil, rows, cols)
			if err != nil {
				return nil, err
			}
			y, err := b.New(rows, cols)
			if err != nil {
				return nil, err
			}
			z, err := b.New(rows, cols)
			if err != nil {
				return nil, err
			}
			for _, op := range []func() error{
				func() error { return b.SiLU(y, x) },
				func() error { return b.GELUTanh(z, y) },
				func() error { return b.SwiGLU(y, z, g) },
				func() error { return b.Add(z, y, x) },
				func() error { return b.Mul(y, z, g) },
			} {
				if err := op(); err != nil {
					return nil, err
				}
			}
			return y, nil
		}),
		check("vae_upsample + vae_transpose", both, selfTestFloatBound, 11, func(b ml.Backend, up func([]float32, ...int) (ml.Tensor, error)) (ml.Tensor, error) {
			x, err := up(nil, 3, 4, 5)
			if err != nil {
				return nil, err
			}
			u, err := b.New(3, 8, 10)
			if err != nil {
				return nil, err
			}
			if err := b.UpsampleNearest(u, x, 2); err != nil {
				return nil, err
			}
			flat, err := b.Slice(u, 0, 3, 80)
			if err != nil {
				return nil, err
			}
			t, err := b.New(80, 3)
			if err != nil {
				return nil, err
			}
			return t, b.Transpose(t, flat)
		}),
	}
	return checks, func() {
		if dev != nil {
			dev.Close()
		}
	}
}

// runOp runs op on b with inputs drawn from seed (up(nil, …) draws, up(data, …) uploads data) and
// downloads its result.
func runOp(b ml.Backend, seed uint64, op opRun) ([]float32, error) {
	r := rand.New(rand.NewPCG(seed, 99))
	var made []ml.Tensor
	defer func() {
		for _, t := range made {
			b.Free(t)
		}
	}()
	up := func(data []float32, shape ...int) (ml.Tensor, error) {
		if data == nil {
			n := 1
			for _, s := range shape {
				n *= s
			}
			data = randoms(r, n, 1)
		}
		t, err := b.Upload(data, shape...)
		if err == nil {
			made = append(made, t)
		}
		return t, err
	}
	out, err := op(b, up)
	if err != nil {
		return nil, err
	}
	return b.Download(out)
}

func rowsAndGain(up func([]float32, ...int) (ml.Tensor, error)) (ml.Tensor, ml.Tensor, error) {
	x, err := up(nil, 37, 300)
	if err != nil {
		return nil, nil, err
	}
	w, err := up(nil, 300)
	return x, w, err
}

func randoms(r *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * scale)
	}
	return v
}
