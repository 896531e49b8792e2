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

// mathModeSafe is MTLMathModeSafe (macOS 15+): no fast-math relaxations (no reassociation, no
// finite-math assumptions).
const mathModeSafe = 0

// mathFunctionsPrecise is MTLMathFloatingPointFunctionsPrecise (macOS 15+): exp, exp2, log, rsqrt,
// tanh, sin, cos … resolve to metal::precise, not to the fast approximations that are the
// default on macOS 15 and later even in the safe math mode.
const mathFunctionsPrecise = 1

// setSafeMath turns fast math off completely in opts (docs/METAL.md, "One math mode"):
// fastMathEnabled = NO, which is all macOS 14 has, and where the OS has them (darwinkit v0.5.0
// has no setters for them) mathMode = MTLMathModeSafe and mathFloatingPointFunctions =
// MTLMathFloatingPointFunctionsPrecise, so neither half of fast math is left on.
func setSafeMath(opts metal.CompileOptions) {
	opts.SetFastMathEnabled(false)
	if opts.RespondsToSelector(objc.Sel("setMathMode:")) {
		objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), int(mathModeSafe))
	}
	if opts.RespondsToSelector(objc.Sel("setMathFloatingPointFunctions:")) {
		objc.Call[objc.Void](opts, objc.Sel("setMathFloatingPointFunctions:"), int(mathFunctionsPrecise))
	}
}
