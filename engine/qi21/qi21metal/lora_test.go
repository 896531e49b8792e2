package qi21metal

import (
	"easel/engine/ml/metal"
	"fmt"
	"strings"
	"testing"

	"easel/engine/convert"
	"easel/engine/lora"
	"easel/engine/lora/loratest"
	"easel/engine/qi21"
	"easel/engine/safetensors"
	"easel/internal/golden"
)

// TestEmuLoRAMatchesCPU applies a random LoRA of each format (factors of every layer; exact
// weight and bias patches) to the tiny model and compares the emulated device's velocity with
// the CPU backend running the same LoRA, on every dit_* case and σ, within the Metal path's
// half-precision budget; and checks that the LoRA really moved the output.
func TestEmuLoRAMatchesCPU(t *testing.T) {
	dev := emuDevice(t)
	cases := loadDiTCases(t)
	m, f := tinyModel(t, convert.ProfileCortiq)
	k := metal.Knobs{Guards: metal.DefaultGuards}
	d, err := New(dev, m, f.Bytes(), Options{Knobs: &k})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := m.Config.InChannels
	layers := qi21.LinearLayers(m.Config)
	for i, format := range []loratest.Format{loratest.PEFT, loratest.Comfy, loratest.DiffBias} {
		t.Run(format.String(), func(t *testing.T) {
			tensors, _ := loratest.Random(layers, format, 6, 0.05, uint64(50+i))
			buf, err := safetensors.Encode(tensors, nil)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := safetensors.Parse(buf)
			a, err := lora.Bind(st, layers)
			if err != nil {
				t.Fatal(err)
			}
			worst, minMoved := 0.0, 1.0
			for _, dc := range cases {
				lay := dc.layout
				cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
				var plain [][]float32
				for _, strength := range []float32{0, 0.8} {
					if err := m.SetLoRAs([]qi21.LoRA{{Adapter: a, Strength: strength}}); err != nil {
						t.Fatal(err)
					}
					ref, err := m.Prefill(t.Context(), lay, dc.text, cond)
					if err != nil {
						t.Fatal(err)
					}
					prog, err := d.Prefill(t.Context(), lay, dc.text, cond)
					if err != nil {
						t.Fatal(err)
					}
					for j, sigma := range dc.sigmas {
						want, err := m.Step(t.Context(), ref, target, sigma)
						if err != nil {
							t.Fatal(err)
						}
						got, err := d.Step(t.Context(), prog, target, sigma)
						if err != nil {
							t.Fatal(err)
						}
						e := golden.RelErr(got, want)
						worst = max(worst, e)
						if strength == 0 {
							plain = append(plain, want)
						} else {
							moved := golden.RelErr(want, plain[j])
							minMoved = min(minMoved, moved)
							if moved < 1e-2 {
								t.Fatalf("%s σ=%v: the LoRA moves the CPU output by only %.3g", dc.name, sigma, moved)
							}
						}
						if e > halfBound {
							t.Errorf("%s strength %v σ=%v: Metal vs CPU with the LoRA: relative error %.3g > %g", dc.name, strength, sigma, e, halfBound)
						}
					}
					m.Release(ref)
					d.Release(prog)
				}
			}
			t.Logf("%v: worst Metal vs CPU relative error %.3g (bound %g); the LoRA moves the output by at least %.3g", format, worst, halfBound, minMoved)
		})
	}
	if err := m.SetLoRAs(nil); err != nil {
		t.Fatal(err)
	}
}

// TestEmuLoRAFlopsCounted: a step's counted LoRA work is 2·rows·rank·(in + out) over the layers
// the device runs (qi21.BlockLoRAFlops per block), so the published-geometry figures in
// docs/BENCHMARKS.md follow from the same count.
func TestEmuLoRAFlopsCounted(t *testing.T) {
	dev := emuDevice(t)
	dc := fewestConditions(t)
	m, f := tinyModel(t, convert.ProfileCortiq)
	k := metal.Knobs{Guards: metal.DefaultGuards}
	d, err := New(dev, m, f.Bytes(), Options{Knobs: &k})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const rank = 5
	a := &lora.Adapter{}
	for l := range m.Config.Layers {
		one, err := qi21.RandomBlockLoRA(m.Config, rank)
		if err != nil {
			t.Fatal(err)
		}
		for _, fc := range one.Factors {
			fc.Layer = strings.Replace(fc.Layer, "transformer_blocks.0.", fmt.Sprintf("transformer_blocks.%d.", l), 1)
			a.Factors = append(a.Factors, fc)
		}
	}
	if err := m.SetLoRAs([]qi21.LoRA{{Adapter: a, Strength: 1}}); err != nil {
		t.Fatal(err)
	}
	defer m.SetLoRAs(nil)
	lay, in := dc.layout, m.Config.InChannels
	prog, err := d.Prefill(t.Context(), lay, dc.text, dc.latents[:lay.CondLatents()*in])
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release(prog)
	if got, want := d.LastPass().LoRAFlops, float64(m.Config.Layers)*qi21.BlockLoRAFlops(m.Config, lay.PrefixLen, rank); got != want {
		t.Errorf("prefill: counted %v LoRA FLOPs, want %v", got, want)
	}
	if _, err := d.Step(t.Context(), prog, dc.latents[lay.CondLatents()*in:], dc.sigmas[0]); err != nil {
		t.Fatal(err)
	}
	if got, want := d.LastPass().LoRAFlops, float64(m.Config.Layers)*qi21.BlockLoRAFlops(m.Config, lay.T, rank); got != want {
		t.Errorf("step: counted %v LoRA FLOPs, want %v", got, want)
	}
}
