//go:build linux && amd64 && cgo

package emu

// SupportsTensorOps reports that the emulator runs Metal 4's tensor operations: the subset
// include/metal_tensor and include/MetalPerformancePrimitives implement (what the project's
// kernels use), with the arithmetic those headers document, not a neural accelerator's.
func (d *Device) SupportsTensorOps() bool { return true }
