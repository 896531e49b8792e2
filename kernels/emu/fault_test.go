//go:build linux && amd64 && cgo

package emu_test

import (
	"errors"
	"math"
	"testing"

	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

func TestParseFault(t *testing.T) {
	for _, c := range []struct {
		in   string
		want emu.Fault
	}{
		{"", emu.Fault{}},
		{"corrupt-gemm", emu.Fault{Kind: emu.CorruptGEMM}},
		{"overflow", emu.Fault{Kind: emu.Overflow}},
		{"watchdog", emu.Fault{Kind: emu.Watchdog}},
		{"watchdog:7", emu.Fault{Kind: emu.Watchdog, Dispatches: 7}},
		{"watchdog:work=1000000", emu.Fault{Kind: emu.Watchdog, Work: 1000000}},
		{"oom", emu.Fault{Kind: emu.OOM, Count: 1}},
		{"oom:0", emu.Fault{Kind: emu.OOM}},
		{"oom:bytes=4096", emu.Fault{Kind: emu.OOM, Bytes: 4096}},
	} {
		got, err := emu.ParseFault(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseFault(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, c := range []emu.Fault{{Kind: emu.Watchdog, Dispatches: 7}, {Kind: emu.Watchdog, Work: 99}, {Kind: emu.OOM, Count: 2}, {Kind: emu.OOM, Bytes: 1 << 20}} {
		if back, err := emu.ParseFault(c.String()); err != nil || back != c {
			t.Errorf("ParseFault(%q) = %+v, %v; want %+v back", c.String(), back, err, c)
		}
	}
	for _, bad := range []string{"gpu-on-fire", "overflow:3", "oom:x", "watchdog:work=0", "oom:work=5"} {
		if _, err := emu.ParseFault(bad); err == nil {
			t.Errorf("ParseFault(%q) accepted", bad)
		}
	}
}

// swiglu runs qi_swiglu over n4·4 (gate, up) pairs in one command buffer of reps dispatches and
// returns the half output and Wait's error.
func swiglu(t *testing.T, dev device.Device, gate, up []float32, reps int) ([]float32, error) {
	t.Helper()
	src, err := kernels.Source("swiglu.metal")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := dev.NewLibrary("swiglu.metal", src)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := dev.Pipeline(lib, "qi_swiglu")
	if err != nil {
		t.Fatal(err)
	}
	n := len(gate)
	gu, _ := dev.NewBuffer(8 * n)
	h, _ := dev.NewBuffer(2 * n)
	defer gu.Release()
	defer h.Release()
	copy(device.View[float32](gu), gate)
	copy(device.View[float32](gu)[n:], up)
	prm := kernels.SwigluParams{N4: uint32(n / 4), UOff: uint32(n), OScale: 1}
	cb, _ := dev.NewCommandBuffer()
	enc := cb.ComputeEncoder()
	enc.SetPipeline(pl)
	enc.SetBuffer(gu, 0, 0)
	enc.SetBuffer(h, 0, 1)
	enc.SetBytes(device.StructBytes(&prm), 2)
	for range reps {
		enc.Dispatch(kernels.SwigluGrid(int(prm.N4)))
	}
	enc.End()
	cb.Commit()
	werr := cb.Wait()
	out := make([]float32, n)
	for i, b := range device.View[uint16](h) {
		out[i] = halfBits(b)
	}
	return out, werr
}

func newFaultDevice(t *testing.T) (device.Device, emu.FaultInjector) {
	t.Helper()
	dev, err := emu.NewDevice(emu.Options{Fault: &emu.Fault{}})
	if errors.Is(err, emu.ErrNoCompiler) {
		t.Skipf("Metal emulator unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dev, dev.(emu.FaultInjector)
}

// TestEmuInjectedFaults: each fault shows the way a Mac shows it, and only where it should.
func TestEmuInjectedFaults(t *testing.T) {
	dev, inj := newFaultDevice(t)
	gate := []float32{4, 4, 0.5, 0.5, -4, 1, 2, 3}
	up := []float32{10, 0.1, 1, 1, 1, 1, 1, 1}
	clean, err := swiglu(t, dev, gate, up, 1)
	if err != nil {
		t.Fatal(err)
	}

	inj.InjectFault(emu.Fault{Kind: emu.Overflow, HalfMax: 1})
	got, err := swiglu(t, dev, gate, up, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		over := math.Abs(float64(clean[i])) > 1
		if over != math.IsInf(float64(got[i]), 0) || !over && got[i] != clean[i] {
			t.Errorf("overflow: element %d is %v (clean %v); want ±inf exactly where |value| > 1", i, got[i], clean[i])
		}
	}
	if inj.FaultsFired() != 1 {
		t.Errorf("overflow fired %d times, want 1", inj.FaultsFired())
	}

	inj.InjectFault(emu.Fault{Kind: emu.Watchdog, Dispatches: 2})
	if _, err := swiglu(t, dev, gate, up, 2); err != nil {
		t.Errorf("watchdog: 2 dispatches under a limit of 2 failed: %v", err)
	}
	_, err = swiglu(t, dev, gate, up, 3)
	if device.KindOf(err) != device.ErrorTimeout {
		t.Errorf("watchdog: 3 dispatches over a limit of 2 gave %v, want a timeout", err)
	}

	inj.InjectFault(emu.Fault{Kind: emu.OOM, Count: 1})
	if _, err := swiglu(t, dev, gate, up, 1); device.KindOf(err) != device.ErrorOutOfMemory {
		t.Errorf("oom: first command buffer gave %v, want out of memory", err)
	}
	if got, err := swiglu(t, dev, gate, up, 1); err != nil || got[0] != clean[0] {
		t.Errorf("oom:1: the second command buffer gave %v, %v; want the clean result", got[0], err)
	}

	// oom:bytes: swiglu holds 12 bytes per element while it runs; a buffer held beside it tips it.
	inj.InjectFault(emu.Fault{Kind: emu.OOM, Bytes: int64(12*len(gate)) + 64})
	if _, err := swiglu(t, dev, gate, up, 1); err != nil {
		t.Errorf("oom:bytes: a command buffer within the memory failed: %v", err)
	}
	extra, err := dev.NewBuffer(4096)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := swiglu(t, dev, gate, up, 1); device.KindOf(err) != device.ErrorOutOfMemory {
		t.Errorf("oom:bytes: with 4 KiB more held, the command buffer gave %v, want out of memory", err)
	}
	extra.Release()
	if _, err := swiglu(t, dev, gate, up, 1); err != nil {
		t.Errorf("oom:bytes: after releasing, the command buffer failed: %v", err)
	}

	inj.InjectFault(emu.Fault{Kind: emu.CorruptGEMM})
	if got, err := swiglu(t, dev, gate, up, 1); err != nil || got[0] != clean[0] || inj.FaultsFired() != 0 {
		t.Errorf("corrupt-gemm changed a kernel that is no GEMM (fired %d, %v)", inj.FaultsFired(), err)
	}
}

// halfBits converts IEEE half bits (finite or inf) to float32.
func halfBits(h uint16) float32 {
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	e, m := int(h>>10&0x1f), float64(h&0x3ff)
	switch e {
	case 0x1f:
		return sign * float32(math.Inf(1))
	case 0:
		return sign * float32(m*math.Pow(2, -24))
	}
	return sign * float32((1+m/1024)*math.Pow(2, float64(e-15)))
}
