package qi21metal

import (
	"easel/engine/ml/metal"
	"testing"

	"easel/engine/convert"
	"easel/internal/testdevice"
	"easel/kernels/device"
)

// TestEmuReleaseWeightsRebuildsTheArena: ReleaseWeights frees the weight arena's no-copy buffers
// (and refuses while a program is live), keeps the auxiliary weights, and Resident then counts
// exactly the device's live bytes; the next Prefill makes the arena again, and its step gives the
// velocity of the step before the release bit for bit, twice over.
func TestEmuReleaseWeightsRebuildsTheArena(t *testing.T) {
	testdevice.EmulatorOnly(t, "live-buffer counts")
	dev, ok := emuDevice(t).(liveCounter)
	if !ok {
		t.Fatal("the emulated device does not count its buffers")
	}
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

	arena := d.weights.Bytes()
	if n, b := dev.LiveNoCopyBuffers(); n == 0 || b != arena {
		t.Fatalf("a new denoiser wraps %d bytes in %d no-copy buffers, its arena plan %d", b, n, arena)
	}
	withArena := d.resident
	run := func() (*Program, []float32) {
		t.Helper()
		p, err := d.Prefill(t.Context(), lay, dc.text, cond)
		if err != nil {
			t.Fatal(err)
		}
		if _, b := dev.LiveNoCopyBuffers(); b != arena {
			t.Fatalf("while a program is live the device wraps %d bytes of the mapping, the arena is %d", b, arena)
		}
		v, err := d.Step(t.Context(), p, target, dc.lastSigma())
		if err != nil {
			t.Fatal(err)
		}
		return p, v
	}
	p, want := run()
	if d.ReleaseWeights() {
		t.Fatal("ReleaseWeights released the arena under a live program")
	}
	if _, b := dev.LiveNoCopyBuffers(); b != arena {
		t.Fatalf("a refused ReleaseWeights left %d bytes of the arena's %d", b, arena)
	}
	d.Release(p)

	for round := range 2 {
		if !d.ReleaseWeights() || !d.ReleaseWeights() {
			t.Fatalf("round %d: ReleaseWeights kept the arena with no program live", round)
		}
		if n, b := dev.LiveNoCopyBuffers(); n != 0 || b != 0 {
			t.Fatalf("round %d: after ReleaseWeights %d no-copy buffers (%d bytes) are live", round, n, b)
		}
		if _, b := dev.LiveBuffers(); d.Resident() != b || d.Resident() != withArena-arena {
			t.Errorf("round %d: released, Resident is %d, the device holds %d bytes; want both %d (the weights less the arena)", round, d.Resident(), b, withArena-arena)
		}
		for l := range d.blocks {
			for i, w := range d.blocks[l].w {
				if w.buf != nil {
					t.Fatalf("round %d: block %d's weight %d is still bound to a released chunk", round, l, i)
				}
			}
		}
		p, got := run()
		if d.Resident() <= withArena {
			t.Errorf("round %d: with a program live Resident is %d, not above the weights' %d", round, d.Resident(), withArena)
		}
		d.Release(p)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("round %d: element %d: %v after rebuilding the arena, %v before releasing it", round, i, got[i], want[i])
			}
		}
	}
	d.Close()
	if n, b := dev.LiveBuffers(); n != 0 || b != 0 {
		t.Errorf("after Close %d buffers (%d bytes) are live", n, b)
	}
}

// TestEmuAuxiliaryBytesIsWhatTheDenoiserHoldsBetweenRuns: for 4-bit and 8-bit block projections,
// a denoiser whose arena is released holds exactly AuxiliaryBytes on the device, by its own
// count and by the device's.
func TestEmuAuxiliaryBytesIsWhatTheDenoiserHoldsBetweenRuns(t *testing.T) {
	for _, tc := range []struct {
		profile convert.Profile
		q8      bool
	}{{convert.ProfileCortiq, false}, {convert.ProfileQ8, true}} {
		testdevice.EmulatorOnly(t, "live-buffer counts")
		dev, ok := emuDevice(t).(liveCounter)
		if !ok {
			t.Fatal("the emulated device does not count its buffers")
		}
		m, f := tinyModel(t, tc.profile)
		k := metal.Knobs{Guards: metal.DefaultGuards}
		d, err := New(dev, m, f.Bytes(), Options{Knobs: &k})
		if err != nil {
			t.Fatal(err)
		}
		if !d.ReleaseWeights() {
			t.Fatalf("%s: a new denoiser kept its arena", tc.profile)
		}
		want := AuxiliaryBytes(m.Config, tc.q8)
		_, held := dev.LiveBuffers()
		t.Logf("%s: %d bytes held between runs", tc.profile, held)
		if d.Resident() != want || held != want {
			t.Errorf("%s: between runs the denoiser reports %d bytes and the device holds %d; AuxiliaryBytes says %d", tc.profile, d.Resident(), held, want)
		}
		d.Close()
	}
}

// liveCounter is a device that counts its live buffers (the emulator).
type liveCounter interface {
	device.Device
	LiveBuffers() (buffers int, bytes int64)
	LiveNoCopyBuffers() (buffers int, bytes int64)
}
