package testdevice

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"easel/engine/ml/metal"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// TestEmulatorOnlyOptionsAreNamed: under system and opaque a test asking for an injected fault is
// skipped with the reason; every other option (a zero fault included) runs there.
func TestEmulatorOnlyOptionsAreNamed(t *testing.T) {
	for _, c := range []struct {
		opts emu.Options
		want string
	}{
		{emu.Options{}, ""},
		{emu.Options{Order: emu.Reverse, Workers: 2}, ""},
		{emu.Options{Fault: &emu.Fault{}}, ""},
		{emu.Options{Fault: &emu.Fault{Kind: emu.Watchdog}}, "fault injection"},
		{emu.Options{Limits: device.Limits{MaxBufferLength: 1}}, ""},
		{emu.Options{NoEncoderTiming: true}, ""},
	} {
		if got := emulatorOnly(c.opts); got != c.want {
			t.Errorf("emulatorOnly(%+v) = %q, want %q", c.opts, got, c.want)
		}
	}
}

// emulatorDevice is a real emulated device (skipping without clang unless required).
func emulatorDevice(t *testing.T) device.Device {
	t.Helper()
	d, err := emu.NewDevice(emu.Options{})
	if errors.Is(err, emu.ErrNoCompiler) {
		t.Skipf("Metal emulator unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestOpaqueHidesTheEmulator: the opaque device answers none of the emulator's extras, its name
// does not say emulator, and it still runs a kernel (its command buffers still time encoders,
// as the darwin device's do).
func TestOpaqueHidesTheEmulator(t *testing.T) {
	d := newOpaque(emulatorDevice(t))
	if _, ok := d.(emu.FaultInjector); ok {
		t.Error("the opaque device injects faults")
	}
	if _, ok := d.(interface{ LiveBuffers() (int, int64) }); ok {
		t.Error("the opaque device counts buffers")
	}
	if metal.HasTensorOps(d) {
		t.Error("the opaque device says it has Metal 4's tensor API")
	}
	if strings.Contains(strings.ToLower(d.Name()), "emu") {
		t.Errorf("the opaque device's name %q gives the emulator away", d.Name())
	}
	runsAKernel(t, d, true)
}

// TestWrappersGiveLimitsAndUntimedBuffers: chosen limits are reported and enforced, and
// untimed command buffers do not time encoders, over any device.
func TestWrappersGiveLimitsAndUntimedBuffers(t *testing.T) {
	base := newOpaque(emulatorDevice(t))
	lim := device.Limits{MaxBufferLength: 4096, RecommendedMaxWorkingSetSize: 1 << 20}
	d := adapt(base, emu.Options{Limits: lim, NoEncoderTiming: true})
	if d.Limits() != lim {
		t.Errorf("Limits() = %+v, want %+v", d.Limits(), lim)
	}
	if _, err := d.NewBuffer(4097); err == nil || !strings.Contains(err.Error(), "maxBufferLength") {
		t.Errorf("a 4097-byte buffer past a 4096-byte limit: err = %v", err)
	}
	runsAKernel(t, d, false)
}

const source = `#include <metal_stdlib>
using namespace metal;
kernel void twice(device float *x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] *= 2; }
`

// runsAKernel doubles four floats on d and checks whether the buffer timed its encoder.
func runsAKernel(t *testing.T, d device.Device, timed bool) {
	t.Helper()
	lib, err := d.NewLibrary("twice.metal", []byte(source))
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Pipeline(lib, "twice")
	if err != nil {
		t.Fatal(err)
	}
	buf, err := d.NewBuffer(16)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Release()
	x := device.View[float32](buf)
	copy(x, []float32{1, 2, 3, 4})
	cb, err := d.NewCommandBuffer()
	if err != nil {
		t.Fatal(err)
	}
	if got := device.TimesEncoders(cb); got != timed {
		t.Errorf("TimesEncoders = %v, want %v", got, timed)
	}
	enc := cb.ComputeEncoder()
	enc.SetPipeline(p)
	enc.SetBuffer(buf, 0, 0)
	enc.DispatchThreads(device.Size{Width: 4, Height: 1, Depth: 1}, device.Size{Width: 4, Height: 1, Depth: 1})
	enc.End()
	cb.Commit()
	if err := cb.Wait(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{2, 4, 6, 8} {
		if x[i] != want {
			t.Errorf("x[%d] = %v, want %v", i, x[i], want)
		}
	}
}

// TestMixedGivesTheEmulatorOnlyToWhatNeedsIt: under mixed a test that took its device without
// declaring an emulator extra gets the opaque device, a declared one (or one choosing a fiber
// order) the emulator with its extras; a test that asks for an extra it did not declare fails.
func TestMixedGivesTheEmulatorOnlyToWhatNeedsIt(t *testing.T) {
	emulatorDevice(t) // skips without clang unless required
	t.Setenv(Env, Mixed)
	var plainDev, orderDev device.Device
	plain := &recorder{TB: t}
	runRecorded(plain, func(tb testing.TB) { plainDev = Device(tb, emu.Options{}) })
	if plain.skipped || plain.failed || plainDev == nil || plainDev.Name() != opaqueName {
		t.Errorf("a plain test under mixed: %v, %q", plainDev, plain.msg)
	}
	ordered := &recorder{TB: t}
	runRecorded(ordered, func(tb testing.TB) { orderDev = Device(tb, emu.Options{Order: emu.Shuffled}) })
	if orderDev == nil || orderDev.Name() == opaqueName {
		t.Errorf("a test choosing the fiber order got %v (%q)", orderDev, ordered.msg)
	}
	declared := &recorder{TB: t}
	runRecorded(declared, func(tb testing.TB) {
		EmulatorOnly(tb, "live-buffer counts")
		d := Device(tb, emu.Options{})
		LiveBuffers(tb, d)
		Faults(tb, Device(tb, emu.Options{Fault: &emu.Fault{}}))
	})
	if declared.skipped || declared.failed {
		t.Errorf("a declared test under mixed: skipped %v, failed %v: %q", declared.skipped, declared.failed, declared.msg)
	}
	late := &recorder{TB: t}
	runRecorded(late, func(tb testing.TB) {
		d := Device(tb, emu.Options{})
		Faults(tb, d)
	})
	if !late.failed || !strings.Contains(late.msg, "without declaring it") {
		t.Errorf("an undeclared extra under mixed: failed %v, %q", late.failed, late.msg)
	}
	lateOnly := &recorder{TB: t}
	t.Setenv(Env, Opaque)
	runRecorded(lateOnly, func(tb testing.TB) {
		Device(tb, emu.Options{})
		EmulatorOnly(tb, "fiber order")
	})
	if !lateOnly.failed || !strings.Contains(lateOnly.msg, "after Device") {
		t.Errorf("EmulatorOnly after Device under opaque: failed %v, %q", lateOnly.failed, lateOnly.msg)
	}
}

// recorder is a testing.TB whose Skip and Fatal end only the recorded function (runRecorded).
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
	cleanups        []func()
}

func (r *recorder) Helper()          {}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// runRecorded runs f with r on its own goroutine, as the testing package runs a test, so Skip
// and Fatal end f alone; then it runs r's cleanups.
func runRecorded(r *recorder, f func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}
