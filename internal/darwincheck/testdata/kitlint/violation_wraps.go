package p

import "github.com/progrium/darwinkit/macos/metal"

// Bind makes the mistake easel made: darwinkit wraps a struct argument with objc.WrapAsProtocol.
func Bind(enc metal.ComputeCommandEncoderObject, pso metal.ComputePipelineStateObject, buf metal.BufferObject) {
	enc.SetComputePipelineState(pso)       // want: wraps SetComputePipelineState
	enc.SetBufferOffsetAtIndex_(buf, 0, 1) // want: wraps SetBufferOffsetAtIndex_
}

// Counters hands Metal an adaptor for an interface argument.
func Counters(desc metal.CounterSampleBufferDescriptor, set metal.CounterSetObject) {
	desc.SetCounterSet(set) // want: wraps SetCounterSet
}
