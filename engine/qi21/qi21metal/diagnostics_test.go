package qi21metal

import (
	"context"
	"easel/engine/ml/metal"
	"errors"
	"math"
	"testing"

	"easel/engine/convert"
	"easel/engine/ml"
	"easel/internal/testdevice"
	"easel/kernels/emu"
)

// TestEmuProfilingAndAmax runs a step in profiling mode with the amax diagnostics on: the velocity is
// bit-identical to a plain run (only the command-buffer boundaries move), every op class the
// step uses has time, and every half site reports a finite, positive stored maximum below half's
// largest value.
func TestEmuProfilingAndAmax(t *testing.T) {
	dev := emuDevice(t)
	m, f := tinyModel(t, convert.ProfileCortiq)
	dc := fewestConditions(t)
	lay := dc.layout
	in := m.Config.InChannels
	cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
	var outs [][]float32
	var logged []string
	for _, k := range []metal.Knobs{{Guards: metal.DefaultGuards}, {Guards: metal.DefaultGuards, Profile: true, Amax: true}} {
		d, err := New(dev, m, f.Bytes(), Options{Knobs: &k, Logf: func(format string, args ...any) {
			logged = append(logged, format)
			t.Logf(format, args...)
		}})
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
		if k.Profile {
			for _, c := range []ml.Class{ml.ClassGemm, ml.ClassAttn, ml.ClassNorm, ml.ClassRope, ml.ClassAct, ml.ClassCopy} {
				if st.ByClass[c] <= 0 {
					t.Errorf("profiling: no time for class %v", c)
				}
				if d.Timings().Snapshot()[c].Time <= 0 {
					t.Errorf("profiling: Timings has no time for class %v", c)
				}
			}
			if len(st.Amax) != len(amaxSites) {
				t.Fatalf("amax: %d sites, want %d", len(st.Amax), len(amaxSites))
			}
			for i, v := range st.Amax {
				if !(v > 0 && v < 65504) || math.IsInf(float64(v), 0) {
					t.Errorf("amax %s = %v, want a finite positive half value", amaxSites[i], v)
				}
			}
			if len(logged) == 0 {
				t.Error("profiling and amax mode logged nothing")
			}
		} else if st.Amax != nil || st.Classes.Buffers[ml.TimeProfiled] != 0 {
			t.Errorf("plain run reported amax %v or profiled buffers %v (per-class times are split in every mode: TestEmuEveryPassSplitsGPUTimeByClass)", st.Amax, st.Classes.Buffers)
		}
		d.Release(prog)
		d.Close()
	}
	for i := range outs[0] {
		if outs[0][i] != outs[1][i] {
			t.Fatalf("element %d: %v plain, %v in profiling mode", i, outs[0][i], outs[1][i])
		}
	}
}

// TestEmuProgramLifecycle checks the contract around programs: two live at once, a third refused,
// a released program refused by Step, releasing twice harmless, and a cancelled context stopping
// a step with the context's error.
func TestEmuProgramLifecycle(t *testing.T) {
	dev := emuDevice(t)
	m, f := tinyModel(t, convert.ProfileCortiq)
	k := metal.Knobs{Guards: metal.DefaultGuards}
	d, err := New(dev, m, f.Bytes(), Options{Knobs: &k})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	dc := fewestConditions(t)
	lay := dc.layout
	in := m.Config.InChannels
	cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
	resident := d.resident
	a, err := d.Prefill(t.Context(), lay, dc.text, cond)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Prefill(t.Context(), lay, dc.text, cond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Prefill(t.Context(), lay, dc.text, cond); err == nil {
		t.Fatal("a third live program was accepted")
	}
	d.Release(a)
	d.Release(a)
	if _, err := d.Step(t.Context(), a, target, 0.5); err == nil {
		t.Fatal("Step accepted a released program")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := d.Step(ctx, b, target, 0.5); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled step: %v, want context.Canceled", err)
	}
	d.Release(b)
	if d.live != 0 || d.resident != resident {
		t.Errorf("after releasing everything: %d live, %d resident bytes; want 0 and %d", d.live, d.resident, resident)
	}
}

// TestEmuFiberOrderDoesNotMatter runs a prefill and a step with the emulator's threads in forward
// and in shuffled order: the whole chain's velocity must be bit-identical (a missing barrier in
// any kernel, or a hazard between dispatches, would show).
func TestEmuFiberOrderDoesNotMatter(t *testing.T) {
	testdevice.EmulatorOnly(t, "fiber order")
	m, f := tinyModel(t, convert.ProfileQ8)
	dc := mostConditions(t)
	lay := dc.layout
	in := m.Config.InChannels
	cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
	k := metal.Knobs{Guards: metal.DefaultGuards}
	var outs [][]float32
	for _, order := range []emu.FiberOrder{emu.Forward, emu.Shuffled} {
		dev := testdevice.Device(t, emu.Options{Order: order})
		d, err := New(dev, m, f.Bytes(), Options{Knobs: &k})
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
		d.Release(prog)
		d.Close()
	}
	for i := range outs[0] {
		if outs[0][i] != outs[1][i] {
			t.Fatalf("element %d: %v in forward order, %v shuffled", i, outs[0][i], outs[1][i])
		}
	}
}
