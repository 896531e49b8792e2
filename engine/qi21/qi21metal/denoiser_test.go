package qi21metal

import (
	"easel/engine/ml/metal"
	"fmt"
	"testing"
	"time"

	"easel/engine/convert"
	"easel/internal/golden"
)

// halfBound is the measured budget of the Metal path on the tiny model: half activations behind
// the default guards (and an f32 residual stream), relative L2 error of the velocity against the
// CPU backend running the same quantized weights. Measured 4.7e-5 … 6.6e-5 over every dit_* case
// and σ with q4tp and q8_2f weights (docs/BENCHMARKS.md, "Whole denoiser through the emulator").
const halfBound = 1e-4

// TestEmuDenoiserMatchesCPU runs every dit_* case's Prefill and Steps through the emulated device and
// compares the velocity with the CPU backend (same .cmf, same codec) and with the reference's
// cached_out_i (whose distance includes the codec's own error, bounded by qi21's quantized tests).
func TestEmuDenoiserMatchesCPU(t *testing.T) {
	dev := emuDevice(t)
	cases := loadDiTCases(t)
	for _, profile := range []convert.Profile{convert.ProfileCortiq, convert.ProfileQ8} {
		t.Run(string(profile), func(t *testing.T) {
			m, f := tinyModel(t, profile)
			k := metal.Knobs{Guards: metal.DefaultGuards}
			d, err := New(dev, m, f.Bytes(), Options{Knobs: &k})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			out := m.Config.OutChannels
			in := m.Config.InChannels
			for _, dc := range cases {
				lay := dc.layout
				cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
				ref, err := m.Prefill(t.Context(), lay, dc.text, cond)
				if err != nil {
					t.Fatal(err)
				}
				t0 := time.Now()
				prog, err := d.Prefill(t.Context(), lay, dc.text, cond)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: prefix %d rows, target %d rows; prefill %v emulator time", dc.name, lay.PrefixLen, lay.T, time.Since(t0).Round(time.Millisecond))
				for i, sigma := range dc.sigmas {
					want, err := m.Step(t.Context(), ref, target, sigma)
					if err != nil {
						t.Fatal(err)
					}
					t0 := time.Now()
					got, err := d.Step(t.Context(), prog, target, sigma)
					if err != nil {
						t.Fatal(err)
					}
					el := time.Since(t0)
					gold := dc.want(t, fmt.Sprintf("cached_out_%d", i))
					if i == 0 {
						gold = gold[lay.PrefixLen*out:]
					}
					eCPU, eGold, eCPUGold := golden.RelErr(got, want), golden.RelErr(got, gold), golden.RelErr(want, gold)
					t.Logf("%s σ=%.4f: metal vs cpu %.3g, metal vs reference %.3g (cpu vs reference %.3g); step %v emulator time, %d command buffers",
						dc.name, sigma, eCPU, eGold, eCPUGold, el.Round(time.Millisecond), d.LastPass().CommandBuffers)
					if eCPU > halfBound {
						t.Errorf("%s σ=%v: Metal path vs CPU relative error %.3g > %g", dc.name, sigma, eCPU, halfBound)
					}
					// Against the reference the Metal path may not be worse than the CPU path plus
					// its own distance from it (the triangle inequality, in the reference's norm).
					if lim := eCPU*norm(want)/norm(gold) + eCPUGold; eGold > lim*(1+1e-9) {
						t.Errorf("%s σ=%v: Metal path vs reference %.4g > %.4g (CPU vs reference + Metal vs CPU)", dc.name, sigma, eGold, lim)
					}
				}
				m.Release(ref)
				d.Release(prog)
			}
		})
	}
}
