//go:build darwin

package metal

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"

	"easel/engine/objcsafe"
	"easel/kernels/device"
)

// This file is kernels/device over darwinkit's Metal bindings: the real GPU. It is type-checked on
// Linux (make darwin-check) and runs only on a Mac. Objects Metal hands back autoreleased
// (command buffers, encoders) are retained inside a short autorelease pool and released when done,
// so no pool has to span goroutines; every other call that makes Objective-C objects (strings,
// compile options, errors, blocks, arrays) runs inside a pool too, since a Go thread has none and
// anything autoreleased outside one leaks. Each object from a new… selector is released once (or
// kept for the life of the process where marked //easel:keep). Messages darwinkit wraps wrongly
// are sent directly (rawcalls_darwin.go); `make darwin-check` lints every darwinkit call.

// languageVersion3_0 is MTLLanguageVersion3_0 (darwinkit v0.5.0 names versions up to 2.4).
const languageVersion3_0 = metal.LanguageVersion(3 << 16)

// newSystemDevice is the Mac's default Metal device (MTLCreateSystemDefaultDevice) with one
// command queue; SystemDevice makes it once per process (systemdevice.go).
func newSystemDevice() (device.Device, error) {
	ptr := systemDefaultDevice()
	if ptr == nil {
		return nil, Decline("this Mac has no Metal device")
	}
	d := &darwinDevice{dev: metal.DeviceObject{Object: objc.ObjectFrom(ptr)}}
	objcsafe.WithPool(func() {
		d.name = d.dev.Name()
		//easel:keep the device's one queue lives as long as the process
		d.queue = d.dev.NewCommandQueue()
		d.sampler = newSampler(d.dev)
	})
	if d.queue.IsNil() {
		return nil, fmt.Errorf("metal: %s gave no command queue", d.name)
	}
	return d, nil
}

type darwinDevice struct {
	dev     metal.DeviceObject
	name    string // MTLDevice.name, read once
	queue   metal.CommandQueueObject
	sampler *sampler // timestamps at compute-pass boundaries (counters_darwin.go); nil: none

	// Compiled libraries (by name and source) and pipelines (by library and function) are kept
	// for the process's life and handed out again: every network, tuning run and self-test that
	// asks for the same kernel gets the same Metal objects, so none is made twice or leaked.
	mu    sync.Mutex
	libs  map[[32]byte]*darwinLibrary
	pipes map[pipelineKey]*darwinPipeline
}

type pipelineKey struct {
	lib      *darwinLibrary
	function string
}

func (d *darwinDevice) Name() string { return d.name }

// Limits are MTLDevice.maxBufferLength and recommendedMaxWorkingSetSize.
func (d *darwinDevice) Limits() device.Limits {
	return device.Limits{MaxBufferLength: int64(d.dev.MaxBufferLength()), RecommendedMaxWorkingSetSize: int64(d.dev.RecommendedMaxWorkingSetSize())}
}

func (d *darwinDevice) NewBuffer(length int) (device.Buffer, error) {
	if length < 0 {
		return nil, fmt.Errorf("metal: a buffer of %d bytes", length)
	}
	var buf metal.BufferObject
	objcsafe.WithPool(func() {
		buf = d.dev.NewBufferWithLengthOptions(uint(max(length, 1)), metal.ResourceStorageModeShared)
	})
	if buf.IsNil() {
		return nil, fmt.Errorf("metal: %s could not allocate %s (largest buffer %s)", d.Name(), FormatBytes(int64(length)), FormatBytes(d.Limits().MaxBufferLength))
	}
	return newDarwinBuffer(buf, length), nil
}

// NewBufferNoCopy wraps mem (page-aligned start and length, e.g. a span of the model file's
// mapping) without copying it. Releasing the buffer leaves mem alone.
func (d *darwinDevice) NewBufferNoCopy(mem []byte) (device.Buffer, error) {
	page := os.Getpagesize()
	if len(mem) == 0 || len(mem)%page != 0 || uintptr(unsafe.Pointer(unsafe.SliceData(mem)))%uintptr(page) != 0 {
		return nil, fmt.Errorf("metal: a no-copy buffer must start and end on %d-byte page boundaries; got %d bytes at %p", page, len(mem), unsafe.SliceData(mem))
	}
	var buf metal.BufferObject
	objcsafe.WithPool(func() { // the deallocator block is autoreleased
		buf = d.dev.NewBufferWithBytesNoCopyLengthOptionsDeallocator(unsafe.Pointer(unsafe.SliceData(mem)), uint(len(mem)),
			metal.ResourceStorageModeShared, func(unsafe.Pointer, uint) {})
	})
	if buf.IsNil() {
		return nil, fmt.Errorf("metal: %s could not wrap %s of the file mapping as a buffer (largest buffer %s)", d.Name(), FormatBytes(int64(len(mem))), FormatBytes(d.Limits().MaxBufferLength))
	}
	return newDarwinBuffer(buf, len(mem)), nil
}

func (d *darwinDevice) NewLibrary(name string, source []byte) (device.Library, error) {
	key := sha256.Sum256(append([]byte(name+"\x00"), source...))
	d.mu.Lock()
	cached := d.libs[key]
	d.mu.Unlock()
	if cached != nil {
		return cached, nil
	}
	var lib metal.LibraryObject
	var functions []string
	var failure string
	objcsafe.WithPool(func() { // the options, the source NSString and the NSError are autoreleased
		opts := metal.NewCompileOptions()
		opts.SetLanguageVersion(languageVersionFor(source))
		setSafeMath(opts)
		var nsErr unsafe.Pointer
		//easel:keep compiled libraries are kept in d.libs for the life of the process
		lib = d.dev.NewLibraryWithSourceOptionsError(string(source), opts, unsafe.Pointer(&nsErr))
		if lib.IsNil() {
			failure = describeNSError(nsErr)
			return
		}
		functions = objcsafe.Strings(objc.Call[objc.Object](lib, objc.Sel("functionNames"))) // count first (objcsafe)
	})
	if lib.IsNil() {
		return nil, fmt.Errorf("metal: compiling %s: %s", name, failure)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if cached := d.libs[key]; cached != nil { // compiled meanwhile by another goroutine
		lib.Release()
		return cached, nil
	}
	if d.libs == nil {
		d.libs = map[[32]byte]*darwinLibrary{}
	}
	l := &darwinLibrary{lib: lib, name: name, functions: functions}
	d.libs[key] = l
	return l, nil
}

func (d *darwinDevice) Pipeline(lib device.Library, function string) (device.Pipeline, error) {
	l, ok := lib.(*darwinLibrary)
	if !ok {
		return nil, fmt.Errorf("metal: library %q was not compiled by the Metal device", lib.Name())
	}
	key := pipelineKey{l, function}
	d.mu.Lock()
	cached := d.pipes[key]
	d.mu.Unlock()
	if cached != nil {
		return cached, nil
	}
	var pso metal.ComputePipelineStateObject
	var failure string
	objcsafe.WithPool(func() { // the name NSString and the NSError are autoreleased
		fn := l.lib.NewFunctionWithName(function)
		if fn.IsNil() {
			failure = fmt.Sprintf("%s has no kernel %q (it has %v)", l.name, function, l.Functions())
			return
		}
		defer fn.Release() // the pipeline keeps what it needs of the function
		var nsErr unsafe.Pointer
		//easel:keep pipelines are kept in d.pipes for the life of the process
		pso = newComputePipelineState(d.dev, fn, &nsErr)
		if pso.IsNil() {
			failure = fmt.Sprintf("pipeline %s of %s: %s", function, l.name, describeNSError(nsErr))
		}
	})
	if pso.IsNil() {
		return nil, fmt.Errorf("metal: %s", failure)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if cached := d.pipes[key]; cached != nil {
		pso.Release()
		return cached, nil
	}
	if d.pipes == nil {
		d.pipes = map[pipelineKey]*darwinPipeline{}
	}
	p := &darwinPipeline{pso: pso, function: function}
	d.pipes[key] = p
	return p, nil
}

func (d *darwinDevice) NewCommandBuffer() (device.CommandBuffer, error) {
	var cb metal.CommandBufferObject
	objcsafe.WithPool(func() {
		cb = d.queue.CommandBuffer()
		if !cb.IsNil() {
			cb.Retain()
		}
	})
	if cb.IsNil() {
		return nil, fmt.Errorf("metal: %s gave no command buffer", d.Name())
	}
	return &darwinCommandBuffer{cb: cb, sampler: d.sampler}, nil
}

// describeNSError is an NSError's description, or a placeholder when Metal gave none. Call it
// inside the pool the error was autoreleased into.
func describeNSError(p unsafe.Pointer) string {
	if p == nil {
		return "no error description from Metal"
	}
	return foundation.ErrorFrom(p).LocalizedDescription()
}

type darwinBuffer struct {
	once sync.Once
	buf  metal.BufferObject
	mem  []byte
}

func newDarwinBuffer(buf metal.BufferObject, length int) *darwinBuffer {
	var mem []byte
	if length > 0 {
		mem = unsafe.Slice((*byte)(buf.Contents()), length)
	}
	return &darwinBuffer{buf: buf, mem: mem}
}

func (b *darwinBuffer) Len() int      { return len(b.mem) }
func (b *darwinBuffer) Bytes() []byte { return b.mem }
func (b *darwinBuffer) Release() {
	b.once.Do(func() {
		b.buf.Release()
		b.mem = nil
	})
}

type darwinLibrary struct {
	lib       metal.LibraryObject
	name      string
	functions []string // MTLLibrary.functionNames, read once inside a pool
}

func (l *darwinLibrary) Name() string        { return l.name }
func (l *darwinLibrary) Functions() []string { return l.functions }

type darwinPipeline struct {
	pso      metal.ComputePipelineStateObject
	function string
}

func (p *darwinPipeline) Function() string { return p.function }
func (p *darwinPipeline) MaxTotalThreadsPerThreadgroup() int {
	return int(p.pso.MaxTotalThreadsPerThreadgroup())
}
func (p *darwinPipeline) ThreadExecutionWidth() int { return int(p.pso.ThreadExecutionWidth()) }

type darwinCommandBuffer struct {
	cb   metal.CommandBufferObject
	gpu  time.Duration
	err  error
	done bool
	// encErr is the first compute pass Metal gave no encoder for (missingEncoder): Wait
	// reports it.
	encErr error

	// Encoder timing (counters_darwin.go): the sample buffer, how many encoders were started and
	// how many of them timed, whether one went untimed, and the resolved times.
	sampler    *sampler
	samples    metal.CounterSampleBufferObject
	encoders   int
	timed      int
	untimed    bool
	encTimes   []time.Duration
	encTimesOK bool
}

var _ device.EncoderTimer = (*darwinCommandBuffer)(nil)

// ComputeEncoder starts a compute pass, timed at its boundaries where the device samples
// timestamps there. When Metal gives no encoder, the pass encodes nothing (every call on it does
// nothing) and Wait reports the error: the interface has no error here, and a nil encoder would
// panic "object is nil" on its first call.
func (c *darwinCommandBuffer) ComputeEncoder() device.Encoder {
	c.encoders++
	if enc, ok := c.timedEncoder(); ok {
		return &darwinEncoder{enc: enc}
	}
	c.untimed = c.untimed || c.sampler != nil
	var enc metal.ComputeCommandEncoderObject
	objcsafe.WithPool(func() {
		enc = c.cb.ComputeCommandEncoder()
		if !enc.IsNil() {
			enc.Retain()
		}
	})
	if enc.IsNil() && c.encErr == nil {
		c.encErr = missingEncoder(c.encoders)
	}
	return &darwinEncoder{enc: enc}
}

func (c *darwinCommandBuffer) Commit() { c.cb.Commit() }

// Wait blocks until the buffer has run, then reads its status, error and GPU times and releases it.
func (c *darwinCommandBuffer) Wait() error {
	if c.done {
		return c.err
	}
	c.done = true
	c.cb.WaitUntilCompleted()
	if st := c.cb.Status(); st != metal.CommandBufferStatusCompleted {
		objcsafe.WithPool(func() { c.err = commandBufferError(c.cb, st) }) // NSError, strings, array
	}
	c.gpu = time.Duration(float64(c.cb.GPUEndTime()-c.cb.GPUStartTime()) * float64(time.Second))
	if c.err == nil {
		c.err = c.encErr // the buffer ran without the pass Metal did not give
	}
	c.resolveTimes()
	c.cb.Release()
	return c.err
}

// commandBufferError is a failed command buffer's error with its kind (device.KindOfMetalError
// over the NSError's code and description), so the caller can retry a watchdog stop in shorter
// buffers, re-plan after an out-of-memory, or report a page fault under the weights.
func commandBufferError(cb metal.CommandBufferObject, st metal.CommandBufferStatus) error {
	msg, code := fmt.Sprintf("the command buffer ended with status %d and no error description from Metal", st), 0
	if e := cb.Error(); !e.IsNil() {
		msg, code = e.LocalizedDescription(), e.Code()
		for _, u := range objcsafe.ArrayResult(e, "underlyingErrors") { // usually empty: count first (objcsafe)
			msg += " (" + foundation.ErrorFrom(u.Ptr()).LocalizedDescription() + ")"
		}
	}
	return &device.CommandBufferError{Kind: device.KindOfMetalError(code, msg), Code: code, Message: msg}
}

// GPUDuration is GPUEndTime − GPUStartTime, valid after Wait.
func (c *darwinCommandBuffer) GPUDuration() time.Duration { return c.gpu }

// darwinEncoder is one compute pass; a nil enc (Metal gave none, ComputeEncoder) makes every call
// do nothing, and the command buffer's Wait reports it.
type darwinEncoder struct {
	enc metal.ComputeCommandEncoderObject
}

func (e *darwinEncoder) SetPipeline(p device.Pipeline) {
	if e.enc.IsNil() {
		return
	}
	if dp, ok := p.(*darwinPipeline); ok {
		setComputePipelineState(e.enc, dp.pso)
	}
}

func (e *darwinEncoder) SetBuffer(buf device.Buffer, offset, index int) {
	if e.enc.IsNil() {
		return
	}
	if db, ok := buf.(*darwinBuffer); ok {
		setBuffer(e.enc, db.buf, uint(offset), uint(index))
	}
}

func (e *darwinEncoder) SetBytes(data []byte, index int) {
	if len(data) > 0 && !e.enc.IsNil() {
		e.enc.SetBytesLengthAtIndex(unsafe.Pointer(unsafe.SliceData(data)), uint(len(data)), uint(index))
	}
}

func (e *darwinEncoder) SetThreadgroupMemoryLength(length, index int) {
	if e.enc.IsNil() {
		return
	}
	e.enc.SetThreadgroupMemoryLengthAtIndex(uint(length), uint(index))
}

func (e *darwinEncoder) Dispatch(groups, threads device.Size) {
	if e.enc.IsNil() {
		return
	}
	e.enc.DispatchThreadgroupsThreadsPerThreadgroup(
		metal.Size{Width: uint64(groups.Width), Height: uint64(groups.Height), Depth: uint64(groups.Depth)},
		metal.Size{Width: uint64(threads.Width), Height: uint64(threads.Height), Depth: uint64(threads.Depth)})
}

// DispatchThreads is dispatchThreads:threadsPerThreadgroup: (non-uniform threadgroups).
func (e *darwinEncoder) DispatchThreads(threads, perGroup device.Size) {
	if e.enc.IsNil() {
		return
	}
	e.enc.DispatchThreadsThreadsPerThreadgroup(
		metal.Size{Width: uint64(threads.Width), Height: uint64(threads.Height), Depth: uint64(threads.Depth)},
		metal.Size{Width: uint64(perGroup.Width), Height: uint64(perGroup.Height), Depth: uint64(perGroup.Depth)})
}

// End is endEncoding (ComputeCommandEncoderObject does not embed CommandEncoderObject in v0.5.0).
func (e *darwinEncoder) End() {
	if e.enc.IsNil() {
		return
	}
	metal.CommandEncoderObject{Object: e.enc.Object}.EndEncoding()
	e.enc.Release()
}

// missingEncoder is the error Wait reports when Metal gave no compute encoder for the n-th pass.
func missingEncoder(n int) error {
	return fmt.Errorf("metal: the command buffer gave no compute encoder for pass %d (Metal returned nil; the device may be lost or out of memory): its work did not run", n)
}
