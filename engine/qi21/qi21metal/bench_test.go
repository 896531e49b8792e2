package qi21metal

import (
	"easel/engine/ml/metal"
	"testing"

	"easel/engine/convert"
)

// BenchmarkEmuStep is one denoiser step of the tiny model (the smallest dit case with a condition
// image — dit_ti2i_one in the public set: 33 prefix rows, 24 target rows —, 2 blocks, q4tp
// weights) on the emulated device. Emulator time on the CPU, not a GPU figure.
func BenchmarkEmuStep(b *testing.B) {
	dev := emuDevice(b)
	m, f := tinyModel(b, convert.ProfileCortiq)
	k := metal.Knobs{Guards: metal.DefaultGuards}
	d, err := New(dev, m, f.Bytes(), Options{Knobs: &k})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	dc := pickDiT(b, "the fewest condition images, at least one", func(a, c *ditCase) bool {
		if (a.conditions() > 0) != (c.conditions() > 0) {
			return a.conditions() > 0
		}
		if a.conditions() != c.conditions() {
			return a.conditions() < c.conditions()
		}
		return a.layout.PrefixLen < c.layout.PrefixLen
	})
	lay := dc.layout
	in := m.Config.InChannels
	prog, err := d.Prefill(b.Context(), lay, dc.text, dc.latents[:lay.CondLatents()*in])
	if err != nil {
		b.Fatal(err)
	}
	defer d.Release(prog)
	target := dc.latents[lay.CondLatents()*in:]
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.Step(b.Context(), prog, target, dc.sigmas[0]); err != nil {
			b.Fatal(err)
		}
	}
}
