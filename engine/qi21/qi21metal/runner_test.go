package qi21metal

import (
	"easel/engine/ml/metal"
	"testing"

	"easel/engine/convert"
	"easel/internal/golden"
)

// TestEmuRunnerFallsBackOnDecline runs one case through a Runner twice: on a device with room the
// program lives on the device (within the half budget of the CPU), on a device whose working set
// holds the weights but not the prompt it falls back to the CPU model and matches it exactly.
func TestEmuRunnerFallsBackOnDecline(t *testing.T) {
	m, f := tinyModel(t, convert.ProfileCortiq)
	k := metal.Knobs{Guards: metal.DefaultGuards}
	dc := mostConditions(t)
	lay := dc.layout
	in := m.Config.InChannels
	cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
	ref, err := m.Prefill(t.Context(), lay, dc.text, cond)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Step(t.Context(), ref, target, dc.lastSigma())
	if err != nil {
		t.Fatal(err)
	}
	m.Release(ref)

	probe, err := New(emuDevice(t), m, f.Bytes(), Options{Knobs: &k})
	if err != nil {
		t.Fatal(err)
	}
	weights := probe.resident
	probe.Close()
	for _, room := range []bool{true, false} {
		ws := int64(1 << 30)
		if !room {
			ws = weights + 1
		}
		d, err := New(limitedDevice(t, 1<<30, ws), m, f.Bytes(), Options{Knobs: &k})
		if err != nil {
			t.Fatal(err)
		}
		var declines []string
		r, err := NewRunner(d, m, func(d *metal.Declined) { declines = append(declines, d.Reason) })
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.Prefill(t.Context(), lay, dc.text, cond)
		if err != nil {
			t.Fatal(err)
		}
		if p.OnDevice() != room || (len(declines) > 0) == room {
			t.Fatalf("room %v: on device %v after %d declines", room, p.OnDevice(), len(declines))
		}
		got, err := r.Step(t.Context(), p, target, dc.lastSigma())
		if err != nil {
			t.Fatal(err)
		}
		e := golden.RelErr(got, want)
		t.Logf("room %v: on device %v, relative error vs the CPU model %.3g", room, p.OnDevice(), e)
		if room && e > halfBound {
			t.Errorf("on the device: relative error %.3g > %g", e, halfBound)
		}
		if !room && e != 0 {
			t.Errorf("after the fallback: relative error %.3g, want the CPU model's own result", e)
		}
		r.Release(p)
		r.Release(p)
		d.Close()
	}
}
