//go:build darwin

package metal

import (
	"bytes"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/metal"

	"easel/engine/objcsafe"
)

// Metal 4's tensor API on the real device: kernels/gemmtensor.metal includes <metal_tensor> and
// MetalPerformancePrimitives, which need the Metal 4 language (macOS 26) and run on the neural
// accelerators of Apple10-family GPUs (M5).

// languageVersion4_0 is MTLLanguageVersion4_0 (darwinkit v0.5.0 names versions up to 2.4).
const languageVersion4_0 = metal.LanguageVersion(4 << 16)

// gpuFamilyApple10 is MTLGPUFamilyApple10 (darwinkit v0.5.0 names families up to Apple7/8).
const gpuFamilyApple10 = metal.GPUFamily(1010)

// languageVersionFor is the language a library's source is compiled with: Metal 4 for a file that
// includes the tensor headers, 3.0 for every other one (so they compile on older systems).
func languageVersionFor(source []byte) metal.LanguageVersion {
	if bytes.Contains(source, []byte("<metal_tensor>")) || bytes.Contains(source, []byte("<MetalPerformancePrimitives/")) {
		return languageVersion4_0
	}
	return languageVersion3_0
}

// SupportsTensorOps reports whether the device has Metal 4's tensor operations with neural
// accelerators behind them: macOS 26 or later and an Apple10-family GPU.
func (d *darwinDevice) SupportsTensorOps() bool {
	var macOS26 bool
	objcsafe.WithPool(func() { // processInfo may come back autoreleased; a Go thread has no pool
		macOS26 = objcsafe.Bool(foundation.ProcessInfo_ProcessInfo(), "isOperatingSystemAtLeastVersion:", foundation.OperatingSystemVersion{MajorVersion: 26})
	})
	if !macOS26 {
		return false
	}
	return objcsafe.Bool(d.dev, "supportsFamily:", gpuFamilyApple10)
}
