package qi21metal

import (
	"easel/engine/ml/metal"
	"errors"
	"strings"
	"testing"

	"easel/engine/convert"
	"easel/internal/testdevice"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// countingDevice is the test device with chosen limits (testdevice.Device: the emulator's own, or
// a wrapper's over the GPU), counting the buffers made.
type countingDevice struct {
	device.Device
	buffers int
}

func (d *countingDevice) NewBuffer(n int) (device.Buffer, error) {
	d.buffers++
	return d.Device.NewBuffer(n)
}

func (d *countingDevice) NewBufferNoCopy(mem []byte) (device.Buffer, error) {
	d.buffers++
	return d.Device.NewBufferNoCopy(mem)
}

func limitedDevice(t *testing.T, maxBuffer, workingSet int64) *countingDevice {
	t.Helper()
	d := testdevice.Device(t, emu.Options{Limits: device.Limits{MaxBufferLength: maxBuffer, RecommendedMaxWorkingSetSize: workingSet}})
	return &countingDevice{Device: d}
}

func wantDeclined(t *testing.T, err error, words ...string) {
	t.Helper()
	var d *metal.Declined
	if !errors.As(err, &d) {
		t.Fatalf("got %v, want a *metal.Declined", err)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("decline %q does not say %q", err, w)
		}
	}
	t.Logf("declined: %v", err)
}

// TestEmuDeclinesWhatDoesNotFit gives the denoiser a device with small limits: the model declines
// when a weight is larger than a buffer or the weights exceed the working set, a prompt declines
// when its K/V buffer or its total does not fit, and nothing is allocated before declining.
func TestEmuDeclinesWhatDoesNotFit(t *testing.T) {
	m, f := tinyModel(t, convert.ProfileQ8)
	k := metal.Knobs{Guards: metal.DefaultGuards}
	dc := mostConditions(t) // condition images in the prefix when the folder has them
	lay := dc.layout
	cond := dc.latents[:lay.CondLatents()*m.Config.InChannels]

	// A weight larger than the largest buffer (the gate projection is 768×256 q8 ≈ 200 KB).
	dev := limitedDevice(t, 64<<10, 1<<30)
	_, err := New(dev, m, f.Bytes(), Options{Knobs: &k})
	wantDeclined(t, err, "transformer_blocks.0", "largest buffer")
	if dev.buffers != 0 {
		t.Errorf("%d buffers were made before declining", dev.buffers)
	}

	// The weights alone past the working set.
	dev = limitedDevice(t, 1<<30, 1<<20)
	_, err = New(dev, m, f.Bytes(), Options{Knobs: &k})
	wantDeclined(t, err, "the model", "recommended working set")
	if dev.buffers != 0 {
		t.Errorf("%d buffers were made before declining", dev.buffers)
	}

	// Room for the weights and a small prompt, not for this one.
	full, err := New(limitedDevice(t, 1<<30, 1<<30), m, f.Bytes(), Options{Knobs: &k})
	if err != nil {
		t.Fatal(err)
	}
	resident := full.resident
	full.Close()
	need := programPlan(m.Config, lay.PrefixLen, lay.T).total()
	dev = limitedDevice(t, 1<<30, resident+need-1)
	d, err := New(dev, m, f.Bytes(), Options{Knobs: &k})
	if err != nil {
		t.Fatal(err)
	}
	before := dev.buffers
	_, err = d.Prefill(t.Context(), lay, dc.text, cond)
	wantDeclined(t, err, "prefix", "recommended working set")
	if dev.buffers != before {
		t.Errorf("%d buffers were made before declining", dev.buffers-before)
	}
	d.Close()

	// The largest activation buffer (gate|up, f32) past the largest buffer; the weights fit.
	plan := programPlan(m.Config, lay.PrefixLen, lay.T)
	var largest plannedBuffer
	for _, b := range plan {
		if b.bytes > largest.bytes {
			largest = b
		}
	}
	dev = limitedDevice(t, largest.bytes-1, 1<<30)
	if d, err = New(dev, m, f.Bytes(), Options{Knobs: &k}); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	resident = d.resident
	before = dev.buffers
	_, err = d.Prefill(t.Context(), lay, dc.text, cond)
	wantDeclined(t, err, largest.what, "largest buffer")
	if dev.buffers != before {
		t.Errorf("%d buffers were made before declining", dev.buffers-before)
	}
	if d.live != 0 || d.resident != resident {
		t.Errorf("a declined prefill left %d live programs and %d resident bytes (want 0 and %d)", d.live, d.resident, resident)
	}
}

// TestEmuSplitArenaGivesTheSameResult limits buffers so the weight arena is split into several
// chunks and checks that prefill and a step give bit-identical velocities to the unsplit arena.
func TestEmuSplitArenaGivesTheSameResult(t *testing.T) {
	m, f := tinyModel(t, convert.ProfileQ8)
	k := metal.Knobs{Guards: metal.DefaultGuards}
	dc := fewestConditions(t)
	lay := dc.layout
	in := m.Config.InChannels
	cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
	var largest int64
	for _, b := range programPlan(m.Config, lay.PrefixLen, lay.T) {
		largest = max(largest, b.bytes)
	}
	var outs [][]float32
	for _, maxBuffer := range []int64{1 << 30, largest} {
		d, err := New(limitedDevice(t, maxBuffer, 1<<30), m, f.Bytes(), Options{Knobs: &k})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("largest buffer %d bytes: the weights in %d chunks", maxBuffer, d.arena.Chunks())
		if maxBuffer == largest && d.arena.Chunks() < 2 {
			t.Fatalf("a %d-byte limit left the arena in one chunk; the test needs a split", maxBuffer)
		}
		prog, err := d.Prefill(t.Context(), lay, dc.text, cond)
		if err != nil {
			t.Fatal(err)
		}
		out, err := d.Step(t.Context(), prog, target, dc.sigmas[0])
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
		d.Release(prog)
		d.Close()
	}
	for i := range outs[0] {
		if outs[0][i] != outs[1][i] {
			t.Fatalf("element %d: %v with one chunk, %v with a split arena", i, outs[0][i], outs[1][i])
		}
	}
}
