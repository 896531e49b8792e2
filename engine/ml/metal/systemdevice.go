package metal

import (
	"sync"

	"easel/kernels/device"
)

// SystemDevice is the Mac's default Metal device with one command queue (elsewhere an error: the
// denoiser declines and the CPU backend runs). It is made once per process and every call
// returns that device (or that error): every backend choice, model reload, Settings or
// Diagnostics open shares one queue and one cache of compiled kernels instead of recompiling
// every kernel.
func SystemDevice() (device.Device, error) { return systemDevice() }

var systemDevice = once(newSystemDevice)

// once is make run on the first call only; every call returns its device and error.
func once(make func() (device.Device, error)) func() (device.Device, error) {
	return sync.OnceValues(make)
}
