//go:build darwin

package metal

import (
	"unsafe"

	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

// The Metal messages darwinkit v0.5.0 has no correct wrapper for, sent directly with objc.Call.
// Its wrappers for these three pass the argument through objc.WrapAsProtocol, which panics
// ("generic type T should be interface type") for the struct types they take, so every pipeline
// build and every dispatch would panic; and there is no …Object variant of them. The darwinkit
// lint in `make darwin-check` (internal/darwincheck/darwinkit.go) fails on any call into such a
// wrapper, so new ones land here too.

// newComputePipelineState is newComputePipelineStateWithFunction:error: with the MTLFunction
// itself. The result is +1 (a `new` selector): the caller releases it. errOut receives an
// autoreleased NSError: read it inside the caller's autorelease pool.
func newComputePipelineState(dev metal.DeviceObject, fn metal.FunctionObject, errOut *unsafe.Pointer) metal.ComputePipelineStateObject {
	return objc.Call[metal.ComputePipelineStateObject](dev, objc.Sel("newComputePipelineStateWithFunction:error:"), fn, unsafe.Pointer(errOut))
}

// setComputePipelineState is setComputePipelineState: with the pipeline state itself.
func setComputePipelineState(enc metal.ComputeCommandEncoderObject, pso metal.ComputePipelineStateObject) {
	objc.Call[objc.Void](enc, objc.Sel("setComputePipelineState:"), pso)
}

// setBuffer is setBuffer:offset:atIndex: with the MTLBuffer itself.
func setBuffer(enc metal.ComputeCommandEncoderObject, buf metal.BufferObject, offset, index uint) {
	objc.Call[objc.Void](enc, objc.Sel("setBuffer:offset:atIndex:"), buf, offset, index)
}

// mathModeSafe is MTLMathModeSafe (macOS 15+): no fast-math relaxations, as the emulator compiles
// the same kernels (docs/METAL.md, "One math mode").
const mathModeSafe = 0

// setSafeMath turns fast math off in opts: mathMode = MTLMathModeSafe where the OS has it (darwinkit
// v0.5.0 has no setter for it), else the older fastMathEnabled = NO.
func setSafeMath(opts metal.CompileOptions) {
	if opts.RespondsToSelector(objc.Sel("setMathMode:")) {
		objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), int(mathModeSafe))
		return
	}
	opts.SetFastMathEnabled(false)
}
