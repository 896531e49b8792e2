//go:build !darwin

package metal

import "easel/kernels/device"

// SystemDevice is the Mac's default Metal device; elsewhere there is none, and the denoiser
// declines so the CPU backend runs.
func SystemDevice() (device.Device, error) {
	return nil, Decline("Metal exists only on macOS")
}
