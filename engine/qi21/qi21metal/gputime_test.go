package qi21metal

import (
	"testing"
	"time"

	"easel/engine/convert"
	"easel/engine/ml"
	"easel/engine/ml/metal"
	"easel/internal/testdevice"
	"easel/kernels/emu"
)

// TestEmuEveryPassSplitsGPUTimeByClass runs a prefill and a step without profiling mode, on an
// emulated device that times its encoders (as a Mac samples timestamps at compute-pass
// boundaries) and on one that cannot (the estimated split): every class the step dispatches gets
// GPU time, the classes add up to the command buffers' GPU time exactly, the source is labelled,
// only the timed device splits its buffers into more encoders, and the velocity is the same
// bit for bit either way (only encoder boundaries move). No timing values are asserted.
func TestEmuEveryPassSplitsGPUTimeByClass(t *testing.T) {
	m, f := tinyModel(t, convert.ProfileCortiq)
	dc := fewestConditions(t)
	lay := dc.layout
	in := m.Config.InChannels
	cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
	knobs := metal.Knobs{Guards: metal.DefaultGuards}
	var outs [][]float32
	for _, tc := range []struct {
		name   string
		opts   emu.Options
		source string
	}{
		{"sampled", emu.Options{}, "sampled"},
		{"estimated", emu.Options{NoEncoderTiming: true}, "estimated split"},
	} {
		dev := testdevice.Device(t, tc.opts)
		d, err := New(dev, m, f.Bytes(), Options{Knobs: &knobs})
		if err != nil {
			t.Fatal(err)
		}
		prog, err := d.Prefill(t.Context(), lay, dc.text, cond)
		if err != nil {
			t.Fatal(err)
		}
		out, err := d.Step(t.Context(), prog, target, dc.midSigma())
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
		st := d.LastPass()
		for _, c := range []ml.Class{ml.ClassGemm, ml.ClassAttn, ml.ClassNorm, ml.ClassRope, ml.ClassAct, ml.ClassCopy} {
			if st.ByClass[c] <= 0 {
				t.Errorf("%s: the step has no GPU time for class %v (%v)", tc.name, c, st.ByClass)
			}
		}
		var sum time.Duration
		for _, d := range st.ByClass {
			sum += d
		}
		if sum != st.GPU {
			t.Errorf("%s: the classes add up to %v, the command buffers to %v", tc.name, sum, st.GPU)
		}
		if got := st.Classes.Source(); got != tc.source {
			t.Errorf("%s: source %q, want %q", tc.name, got, tc.source)
		}
		if tc.name == "sampled" && st.Encoders <= st.CommandBuffers {
			t.Errorf("sampled: %d encoders in %d command buffers; want an encoder per run of one class", st.Encoders, st.CommandBuffers)
		}
		if tc.name == "estimated" && st.Encoders != st.CommandBuffers {
			t.Errorf("estimated: %d encoders in %d command buffers; want one per buffer", st.Encoders, st.CommandBuffers)
		}
		t.Logf("%s: a step in %d command buffers, %d encoders; %s", tc.name, st.CommandBuffers, st.Encoders, st.describe(knobs.Guards))
		g := d.GPUClasses()
		if g.Total() != d.DeviceTime() {
			t.Errorf("%s: GPUClasses total %v, DeviceTime %v", tc.name, g.Total(), d.DeviceTime())
		}
		if g.Buffers[ml.TimeProfiled] != 0 {
			t.Errorf("%s: profiled buffers counted without profiling mode: %v", tc.name, g.Buffers)
		}
		d.Release(prog)
		d.Close()
	}
	for i := range outs[0] {
		if outs[0][i] != outs[1][i] {
			t.Fatalf("element %d: %v with an encoder per class run, %v with one encoder per buffer", i, outs[0][i], outs[1][i])
		}
	}
}

// BenchmarkEmuStepEncoderTiming is one step on the emulator with an encoder per run of one class
// (the device times encoders: what a Mac with stage-boundary sampling does) against one encoder per
// command buffer (the estimated split), to show what the extra encoders cost there. Emulator
// time, not a GPU figure.
func BenchmarkEmuStepEncoderTiming(b *testing.B) {
	m, f := tinyModel(b, convert.ProfileCortiq)
	dc := fewestConditions(b)
	lay := dc.layout
	in := m.Config.InChannels
	cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
	knobs := metal.Knobs{Guards: metal.DefaultGuards}
	for _, tc := range []struct {
		name string
		opts emu.Options
	}{{"encoder-per-class-run", emu.Options{}}, {"encoder-per-buffer", emu.Options{NoEncoderTiming: true}}} {
		b.Run(tc.name, func(b *testing.B) {
			d, err := New(testdevice.Device(b, tc.opts), m, f.Bytes(), Options{Knobs: &knobs})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			prog, err := d.Prefill(b.Context(), lay, dc.text, cond)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Release(prog)
			b.ResetTimer()
			for range b.N {
				if _, err := d.Step(b.Context(), prog, target, dc.midSigma()); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(d.LastPass().Encoders), "encoders/step")
		})
	}
}
