// Package device is the small GPU interface the Metal backend encodes its work against: buffers,
// libraries of compute kernels, pipelines, command buffers, compute encoders, dispatch, commit and
// wait. It is pure Go with no cgo so that two implementations can satisfy it: the real one over
// darwinkit (engine/ml/metal, darwin only) and the emulated one in kernels/emu, which compiles the
// same .metal sources with clang and runs them on the CPU, so CI exercises the backend's encoding
// and kernels without a Mac (docs/ARCHITECTURE.md §3).
//
// The interface mirrors Metal's shapes and names so the darwinkit implementation is a thin
// wrapper: MTLDevice, MTLBuffer (shared storage), MTLLibrary, MTLComputePipelineState,
// MTLCommandBuffer and MTLComputeCommandEncoder with dispatchThreadgroups.
package device

import "time"

// Size is a 3-D extent, Metal's MTLSize: a count of threadgroups or of threads per threadgroup.
type Size struct {
	Width, Height, Depth int
}

// Count returns Width·Height·Depth.
func (s Size) Count() int { return s.Width * s.Height * s.Depth }

// Device creates the objects work is encoded with.
type Device interface {
	// Name describes the device for logs and error messages.
	Name() string
	// Limits reports the memory limits the backend checks before allocating.
	Limits() Limits
	// NewBuffer returns a zero-filled buffer of length bytes in memory the host and the kernels
	// share (Metal's storage mode "shared").
	NewBuffer(length int) (Buffer, error)
	// NewBufferNoCopy wraps host memory the caller owns, typically a span of the model file's
	// mapping, without copying it (newBufferWithBytesNoCopy). Its start and length must be
	// multiples of the page size. The memory must stay mapped until Release, which does not
	// free it.
	NewBufferNoCopy(mem []byte) (Buffer, error)
	// NewLibrary compiles MSL source; name is the file name diagnostics point at.
	NewLibrary(name string, source []byte) (Library, error)
	// Pipeline returns the compute pipeline of the kernel function named function in lib.
	Pipeline(lib Library, function string) (Pipeline, error)
	// NewCommandBuffer starts a command buffer on the device's queue.
	NewCommandBuffer() (CommandBuffer, error)
}

// Limits are a device's memory limits (MTLDevice maxBufferLength and
// recommendedMaxWorkingSetSize).
type Limits struct {
	// MaxBufferLength is the largest single buffer in bytes; NewBuffer fails past it.
	MaxBufferLength int64
	// RecommendedMaxWorkingSetSize is how many bytes of buffers the device can use without
	// degrading performance; the backend declines work that needs more.
	RecommendedMaxWorkingSetSize int64
}

// Buffer is device memory the host can read and write between command buffers.
type Buffer interface {
	// Len is the length in bytes.
	Len() int
	// Bytes is the buffer's memory. It stays valid until Release; do not touch it while a
	// command buffer that uses the buffer is committed and not yet waited for.
	Bytes() []byte
	// Release frees the memory. The buffer must not be used afterwards.
	Release()
}

// Library is compiled MSL source.
type Library interface {
	// Name is the file name the library was compiled from.
	Name() string
	// Functions lists the kernel functions by their Metal names.
	Functions() []string
}

// Pipeline is a compute pipeline state: one kernel function, ready to dispatch.
type Pipeline interface {
	// Function is the kernel's Metal name.
	Function() string
	// MaxTotalThreadsPerThreadgroup is the largest threadgroup the pipeline accepts.
	MaxTotalThreadsPerThreadgroup() int
	// ThreadExecutionWidth is the SIMD-group width (32 on Apple GPUs and in the emulator).
	ThreadExecutionWidth() int
}

// CommandBuffer collects encoded work; Commit submits it and Wait blocks until it has run.
type CommandBuffer interface {
	// ComputeEncoder starts a compute pass. End it before starting another one or committing.
	ComputeEncoder() Encoder
	// Commit submits the buffer. Nothing may be encoded into it afterwards.
	Commit()
	// Wait blocks until the committed work is done and reports the first error: an encoding
	// mistake (the emulator checks bindings and sizes) or a failed execution.
	Wait() error
	// GPUDuration is the time between the device starting and finishing the buffer (Metal's
	// GPUEndTime − GPUStartTime; wall-clock CPU time in the emulator). Valid after Wait.
	GPUDuration() time.Duration
}

// Encoder records compute dispatches. Bindings persist from one dispatch to the next, as in Metal.
type Encoder interface {
	// SetPipeline selects the kernel for the following dispatches.
	SetPipeline(p Pipeline)
	// SetBuffer binds buf, starting offset bytes in, to [[buffer(index)]].
	SetBuffer(buf Buffer, offset, index int)
	// SetBytes copies data (at most 4 KiB, Metal's limit) into [[buffer(index)]] for the
	// following dispatches; use StructBytes for a parameter struct.
	SetBytes(data []byte, index int)
	// SetThreadgroupMemoryLength sizes the [[threadgroup(index)]] kernel argument.
	SetThreadgroupMemoryLength(length, index int)
	// Dispatch runs threadgroups × threadsPerGroup threads (Metal's dispatchThreadgroups).
	Dispatch(threadgroups, threadsPerGroup Size)
	// DispatchThreads runs exactly threads threads in groups of threadsPerGroup, the groups at
	// the grid's far edges being smaller (Metal's dispatchThreads, non-uniform threadgroups).
	DispatchThreads(threads, threadsPerGroup Size)
	// End finishes the pass.
	End()
}

// Limits Metal documents for every Apple GPU, which the encoders check too.
const (
	// MaxBufferIndex is the largest [[buffer(i)]] index.
	MaxBufferIndex = 30
	// MaxThreadgroupMemoryIndex is the largest [[threadgroup(i)]] index.
	MaxThreadgroupMemoryIndex = 7
	// MaxSetBytesLength is the most setBytes may copy.
	MaxSetBytesLength = 4096
	// MaxThreadsPerThreadgroup is the largest threadgroup.
	MaxThreadsPerThreadgroup = 1024
	// MaxThreadgroupMemoryLength is the threadgroup memory of one threadgroup in bytes.
	MaxThreadgroupMemoryLength = 32 << 10
)
