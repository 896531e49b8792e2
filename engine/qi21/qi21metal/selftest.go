package qi21metal

import (
	"context"
	"math/rand/v2"

	"easel/engine/ml/metal"
	"easel/engine/qi21"
	"easel/kernels/device"
)

// selfTestBound is the denoiser check's bound: the emulator tests' (halfBound in denoiser_test.go:
// measured 4.7e-5…6.6e-5 over the reference cases) raised to the text encoder's and VAE's half
// bound, 2e-3, for Metal's fast math on random prompts — still far below a wrong kernel (the
// emulator's corrupt-gemm fault gives errors of order one).
const selfTestBound = 2e-3

// SelfTestChecks is the denoiser's slice of the first-use self-test: a prefill of 8 random prompt
// rows and a step of 32 target rows through the whole network on the device (every kernel of the
// denoiser: the q4tp/q8 GEMMs, flash attention, q/k norm + RoPE, the row ops, SwiGLU, K/V copy,
// embed, final, the overflow watch) against the CPU model m on the same weights. An overflow is
// recovered as in a real run, so the guards that passed are what the report remembers (*guards,
// when not nil, receives them).
func SelfTestChecks(m *qi21.Model, mapping []byte, knobs *metal.Knobs, guards *metal.Guards) []metal.KernelCheck {
	return []metal.KernelCheck{{
		Kernel: "denoiser (qi_mm_q4tp/qi_mm_q8, qi_flash, qi_qkrope, qi_rowop, qi_swiglu, qi_kvcopy, qi_embed, qi_final, qi_amax)",
		Stages: []string{metal.StageDenoiser},
		Bound:  selfTestBound,
		Run: func(ctx context.Context, dev device.Device) ([]float32, []float32, error) {
			c := m.Config
			const text, th, tw = 8, 4, 8
			mask := make([]bool, text+th*tw/4)
			for i := text; i < len(mask); i++ {
				mask[i] = true
			}
			lay, err := qi21.NewLayout(mask, [][2]int{{th, tw}})
			if err != nil {
				return nil, nil, err
			}
			r := rand.New(rand.NewPCG(21, 22))
			draw := func(n int) []float32 {
				v := make([]float32, n)
				for i := range v {
					v[i] = float32(r.NormFloat64())
				}
				return v
			}
			prompt, x := draw(lay.TextLen*c.ContextDim), draw(lay.T*c.InChannels)
			d, err := New(dev, m, mapping, Options{Knobs: knobs})
			if err != nil {
				return nil, nil, err
			}
			defer d.Close()
			gp, err := d.Prefill(ctx, lay, prompt, nil)
			if err != nil {
				return nil, nil, err
			}
			got, err := d.Step(ctx, gp, x, 0.5)
			d.Release(gp)
			if err != nil {
				return nil, nil, err
			}
			if guards != nil {
				*guards = gp.guards
			}
			cp, err := m.Prefill(ctx, lay, prompt, nil)
			if err != nil {
				return nil, nil, err
			}
			defer m.Release(cp)
			want, err := m.Step(ctx, cp, x, 0.5)
			return got, want, err
		},
	}}
}
