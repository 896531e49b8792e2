package testdevice

import (
	"fmt"

	"easel/engine/ml/metal"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// adapt gives the shared device of system or opaque mode what opts asks for that any GPU could
// have: other memory limits (a smaller Mac) and command buffers that cannot time their encoders
// (a GPU without stage-boundary counter sampling).
func adapt(d device.Device, opts emu.Options) device.Device {
	if opts.Limits != (device.Limits{}) {
		d = limitedDevice{Device: d, limits: opts.Limits}
	}
	if opts.NoEncoderTiming {
		d = untimedDevice{d}
	}
	return d
}

// limitedDevice reports chosen limits and refuses a buffer past its MaxBufferLength, as Metal
// does on a device whose maxBufferLength is that.
type limitedDevice struct {
	device.Device
	limits device.Limits
}

func (d limitedDevice) Limits() device.Limits { return d.limits }

// SupportsTensorOps passes on the wrapped device's answer (metal.TensorOpsDevice).
func (d limitedDevice) SupportsTensorOps() bool { return metal.HasTensorOps(d.Device) }

func (d limitedDevice) NewBuffer(n int) (device.Buffer, error) {
	if err := d.check(n); err != nil {
		return nil, err
	}
	return d.Device.NewBuffer(n)
}

func (d limitedDevice) NewBufferNoCopy(mem []byte) (device.Buffer, error) {
	if err := d.check(len(mem)); err != nil {
		return nil, err
	}
	return d.Device.NewBufferNoCopy(mem)
}

func (d limitedDevice) check(n int) error {
	if int64(n) > d.limits.MaxBufferLength {
		return fmt.Errorf("%s: a %d-byte buffer is past the device's maxBufferLength of %d bytes", d.Name(), n, d.limits.MaxBufferLength)
	}
	return nil
}

// untimedDevice's command buffers do not time their encoders (no device.EncoderTimer).
type untimedDevice struct {
	device.Device
}

func (d untimedDevice) NewCommandBuffer() (device.CommandBuffer, error) {
	cb, err := d.Device.NewCommandBuffer()
	if err != nil {
		return nil, err
	}
	return untimedCommandBuffer{cb}, nil
}

// SupportsTensorOps passes on the wrapped device's answer (metal.TensorOpsDevice).
func (d untimedDevice) SupportsTensorOps() bool { return metal.HasTensorOps(d.Device) }

type untimedCommandBuffer struct {
	device.CommandBuffer
}
