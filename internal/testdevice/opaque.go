package testdevice

import (
	"time"

	"easel/kernels/device"
)

// opaqueDevice is a device seen only through device.Device, as the system device is: its methods
// are the interface's, its command buffers the interface's plus device.EncoderTimer (which the
// darwin device has too). A type assertion for anything else (emu.FaultInjector, live-buffer
// counts, metal.TensorOpsDevice) fails.
type opaqueDevice struct {
	inner device.Device
}

func newOpaque(d device.Device) device.Device { return opaqueDevice{inner: d} }

// opaqueName is what the device calls itself: nothing a test could tell the emulator by.
const opaqueName = "GPU (" + Env + "=" + Opaque + ")"

func (d opaqueDevice) Name() string          { return opaqueName }
func (d opaqueDevice) Limits() device.Limits { return d.inner.Limits() }
func (d opaqueDevice) NewBuffer(n int) (device.Buffer, error) {
	return d.inner.NewBuffer(n)
}
func (d opaqueDevice) NewBufferNoCopy(mem []byte) (device.Buffer, error) {
	return d.inner.NewBufferNoCopy(mem)
}
func (d opaqueDevice) NewLibrary(name string, source []byte) (device.Library, error) {
	return d.inner.NewLibrary(name, source)
}
func (d opaqueDevice) Pipeline(lib device.Library, function string) (device.Pipeline, error) {
	return d.inner.Pipeline(lib, function)
}
func (d opaqueDevice) NewCommandBuffer() (device.CommandBuffer, error) {
	cb, err := d.inner.NewCommandBuffer()
	if err != nil {
		return nil, err
	}
	return opaqueCommandBuffer{cb}, nil
}

// opaqueCommandBuffer passes on device.CommandBuffer and device.EncoderTimer only.
type opaqueCommandBuffer struct {
	device.CommandBuffer
}

func (c opaqueCommandBuffer) TimesEncoders() bool { return device.TimesEncoders(c.CommandBuffer) }
func (c opaqueCommandBuffer) EncoderTimes() ([]time.Duration, bool) {
	return device.EncoderTimes(c.CommandBuffer)
}
