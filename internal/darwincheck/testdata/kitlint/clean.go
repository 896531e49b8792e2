package p

import (
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

type holder struct {
	buf metal.BufferObject
	q   metal.CommandQueueObject
}

func (h *holder) Release() { h.buf.Release() }

// Clean does each thing the right way: the raw object through objc.Call and the …Object setters,
// an autoreleased descriptor left to its pool, every +1 object released, returned, stored in a
// released field, or kept on purpose with a reason.
func Clean(dev metal.DeviceObject, lib metal.LibraryObject, enc metal.ComputeCommandEncoderObject, set metal.CounterSetObject) (*holder, metal.ComputePipelineStateObject) {
	h := &holder{}
	var pso metal.ComputePipelineStateObject
	objc.WithAutoreleasePool(func() {
		desc := metal.NewCounterSampleBufferDescriptor()
		desc.SetCounterSetObject(set)
		opts := metal.NewCompileOptions()
		opts.Retain()
		opts.Release()
		fn := lib.NewFunctionWithName("k")
		defer fn.Release()
		var nsErr unsafe.Pointer
		pso = objc.Call[metal.ComputePipelineStateObject](dev, objc.Sel("newComputePipelineStateWithFunction:error:"), fn, unsafe.Pointer(&nsErr))
		objc.Call[objc.Void](enc, objc.Sel("setComputePipelineState:"), pso)
		h.buf = dev.NewBufferWithLengthOptions(16, metal.ResourceStorageModeShared)
		//easel:keep one queue for the life of the process
		h.q = dev.NewCommandQueue()
	})
	return h, pso
}

// Results reads an NSArray through its count and objectAtIndex:, and a BOOL as a full 64-bit
// value; a []byte result (NSData) and a responds-to check (cgo) are safe as darwinkit reads them.
func Results(dev metal.DeviceObject, e foundation.Error, sb metal.CounterSampleBufferObject) (int, bool) {
	arr := objc.Call[objc.Object](e, objc.Sel("underlyingErrors"))
	n := int(objc.Call[uint64](arr, objc.Sel("count")))
	for i := range n {
		_ = objc.Call[objc.Object](arr, objc.Sel("objectAtIndex:"), uint64(i))
	}
	ok := objc.Call[uint64](dev, objc.Sel("supportsFamily:"), metal.GPUFamilyApple7)&0xff != 0
	raw := sb.ResolveCounterRange(foundation.Range{Location: 0, Length: 2})
	return n + len(raw), ok && dev.HasSupportsCounterSampling()
}
