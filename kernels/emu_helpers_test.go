package kernels_test

import (
	"testing"

	"easel/internal/testdevice"
	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// newDevice returns the emulated device, skipping the test only when clang is not installed.
func newDevice(t testing.TB, order emu.FiberOrder) device.Device {
	t.Helper()
	return testdevice.Device(t, emu.Options{Order: order})
}

// pipeline compiles the embedded file and returns the named kernel.
func pipeline(t testing.TB, d device.Device, file, function string) device.Pipeline {
	t.Helper()
	src, err := kernels.Source(file)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := d.NewLibrary(file, src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Pipeline(lib, function)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newBuffer allocates a device buffer released at the end of the test.
func newBuffer(t testing.TB, d device.Device, n int) device.Buffer {
	t.Helper()
	b, err := d.NewBuffer(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Release)
	return b
}

// binding is one SetBuffer or SetBytes of a dispatch.
type binding struct {
	index int
	buf   device.Buffer
	off   int
	bytes []byte
}

// run encodes one dispatch in its own command buffer and waits for it.
func run(t testing.TB, d device.Device, p device.Pipeline, groups, threads device.Size, binds ...binding) {
	t.Helper()
	cb, err := d.NewCommandBuffer()
	if err != nil {
		t.Fatal(err)
	}
	enc := cb.ComputeEncoder()
	enc.SetPipeline(p)
	for _, b := range binds {
		if b.buf != nil {
			enc.SetBuffer(b.buf, b.off, b.index)
		} else {
			enc.SetBytes(b.bytes, b.index)
		}
	}
	enc.Dispatch(groups, threads)
	enc.End()
	cb.Commit()
	if err := cb.Wait(); err != nil {
		t.Fatal(err)
	}
}
