//go:build !darwin

package metal

import "easel/kernels/device"

// newSystemDevice: Metal exists only on macOS, so there is no system device; the denoiser
// declines and the CPU backend runs.
func newSystemDevice() (device.Device, error) {
	return nil, Decline("Metal exists only on macOS")
}
