//go:build linux && amd64 && cgo

package emu

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"easel/kernels/device"
)

// Device is the emulated device. It is safe for concurrent use; command buffers run one at a time.
type Device struct {
	opts Options
	cc   *compiler

	mu      sync.Mutex
	objects map[string]*sharedObject // by shared-object path
	run     sync.Mutex               // one command buffer at a time: function constants are process globals

	live      atomic.Int64 // buffers made and not yet released
	liveBytes atomic.Int64 // their lengths
	// the live buffers made by NewBufferNoCopy (a weight arena over a file mapping), and their lengths
	liveNoCopy, liveNoCopyBytes atomic.Int64

	faults faultState // fault_device.go
}

var _ device.Device = (*Device)(nil)

// NewDevice finds clang++ and returns an emulated device (a *Device). The error wraps
// ErrNoCompiler when no compiler is installed.
func NewDevice(opts Options) (device.Device, error) {
	cc, err := findCompiler()
	if err != nil {
		return nil, unavailable(err)
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	if opts.Limits == (device.Limits{}) {
		opts.Limits = DefaultLimits
	}
	if opts.Order < Forward || opts.Order > Shuffled {
		return nil, fmt.Errorf("emu.Options.Order %d is not Forward, Reverse or Shuffled", opts.Order)
	}
	d := &Device{opts: opts, cc: cc, objects: map[string]*sharedObject{}}
	f := Fault{}
	if opts.Fault != nil {
		f = *opts.Fault
	} else if f, err = FaultFromEnv(); err != nil {
		return nil, err
	}
	d.InjectFault(f)
	return d, nil
}

// Name describes the emulator and its compiler, and an injected fault.
func (d *Device) Name() string {
	name := "Metal emulator (kernels/emu, " + d.cc.version + ")"
	if f := d.Fault(); f.Kind != NoFault {
		name += " with the injected fault " + f.String()
	}
	return name
}

// Limits returns Options.Limits.
func (d *Device) Limits() device.Limits { return d.opts.Limits }

// checkLength refuses a buffer past MaxBufferLength, as Metal does (it returns nil).
func (d *Device) checkLength(n int) error {
	if int64(n) > d.opts.Limits.MaxBufferLength {
		return fmt.Errorf("emu: a %d-byte buffer is past the device's maxBufferLength of %d bytes", n, d.opts.Limits.MaxBufferLength)
	}
	return nil
}

// NewBuffer returns length zeroed bytes, 16-byte aligned and followed by a guard page: a kernel
// that reads or writes more than 15 bytes past the end stops the process with SIGSEGV.
func (d *Device) NewBuffer(length int) (device.Buffer, error) {
	if length <= 0 {
		return nil, fmt.Errorf("emu: a buffer of %d bytes: Metal buffers need a positive length", length)
	}
	if err := d.checkLength(length); err != nil {
		return nil, err
	}
	p, mapping := mapGuarded(length)
	if p == nil {
		return nil, fmt.Errorf("emu: out of memory mapping a %d-byte buffer", length)
	}
	b := &Buffer{dev: d, mem: p, n: length, mapping: mapping}
	b.cleanup = runtime.AddCleanup(b, guardedMemory.unmap, mapping)
	d.count(b)
	return b, nil
}

// NewBufferNoCopy wraps mem, which must start and end on page boundaries (Metal's rule for
// no-copy buffers, checked here with the host's page size). Go memory is pinned until Release.
func (d *Device) NewBufferNoCopy(mem []byte) (device.Buffer, error) {
	page := os.Getpagesize()
	if len(mem) == 0 || len(mem)%page != 0 || uintptr(unsafe.Pointer(&mem[0]))%uintptr(page) != 0 {
		var at uintptr
		if len(mem) > 0 {
			at = uintptr(unsafe.Pointer(&mem[0]))
		}
		return nil, fmt.Errorf("emu: a no-copy buffer must start and end on %d-byte page boundaries (Metal's rule); got %d bytes at %#x: split the mapping at page boundaries", page, len(mem), at)
	}
	if err := d.checkLength(len(mem)); err != nil {
		return nil, err
	}
	b := &Buffer{dev: d, mem: unsafe.Pointer(&mem[0]), n: len(mem), borrowed: true}
	b.pinner.Pin(&mem[0]) // no-op for memory outside the Go heap (a file mapping)
	d.count(b)
	d.liveNoCopy.Add(1)
	d.liveNoCopyBytes.Add(int64(b.n))
	return b, nil
}

// count adds a new buffer to the live count.
func (d *Device) count(b *Buffer) {
	d.live.Add(1)
	d.liveBytes.Add(int64(b.n))
}

// LiveBuffers is the number of buffers made (NewBuffer, NewBufferNoCopy) and not yet released,
// and their total length: what a leak check compares with the idle value. A buffer dropped
// without Release stays counted (its memory is unmapped by the garbage collector, but the caller
// forgot it).
func (d *Device) LiveBuffers() (buffers int, bytes int64) {
	return int(d.live.Load()), d.liveBytes.Load()
}

// LiveNoCopyBuffers is the part of LiveBuffers made by NewBufferNoCopy: the caller's memory
// wrapped in place (a network's weight arena over the model file's mapping).
func (d *Device) LiveNoCopyBuffers() (buffers int, bytes int64) {
	return int(d.liveNoCopy.Load()), d.liveNoCopyBytes.Load()
}

// NewLibrary compiles the MSL source (file name name) with clang, or reuses the cached build.
func (d *Device) NewLibrary(name string, source []byte) (device.Library, error) {
	path, err := d.cc.build(name, source)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	so, ok := d.objects[path]
	if !ok {
		if so, err = openShared(path); err != nil {
			return nil, err
		}
		d.objects[path] = so
	}
	return &Library{name: name, so: so}, nil
}

// Pipeline looks function up in lib, which must come from this device.
func (d *Device) Pipeline(lib device.Library, function string) (device.Pipeline, error) {
	l, ok := lib.(*Library)
	if !ok {
		return nil, fmt.Errorf("emu: library %q was not created by the emulated device", lib.Name())
	}
	if !slices.Contains(l.so.kernels, function) {
		return nil, fmt.Errorf("emu: %s has no kernel %q (it has %v); template kernels are not registered", l.name, function, l.so.kernels)
	}
	return &Pipeline{lib: l, function: function}, nil
}

// NewCommandBuffer starts an empty command buffer.
func (d *Device) NewCommandBuffer() (device.CommandBuffer, error) {
	return &CommandBuffer{dev: d}, nil
}

// Buffer is emulated device memory (C memory, so kernels can hold pointers into it).
type Buffer struct {
	dev      *Device
	mem      unsafe.Pointer
	n        int
	mapping  guardedMemory // NewBuffer: the memory and its guard page
	cleanup  runtime.Cleanup
	borrowed bool           // NewBufferNoCopy: the caller's memory
	pinner   runtime.Pinner // keeps borrowed Go memory in place while kernels may use it
}

// Len is the length in bytes.
func (b *Buffer) Len() int { return b.n }

// Bytes is the buffer's memory; nil after Release.
func (b *Buffer) Bytes() []byte {
	if b.mem == nil {
		return nil
	}
	return unsafe.Slice((*byte)(b.mem), b.n)
}

// Release frees the memory, or for a no-copy buffer lets go of the caller's memory.
func (b *Buffer) Release() {
	if b.mem != nil {
		b.dev.live.Add(-1)
		b.dev.liveBytes.Add(-int64(b.n))
	}
	switch {
	case b.mem == nil:
	case b.borrowed:
		b.dev.liveNoCopy.Add(-1)
		b.dev.liveNoCopyBytes.Add(-int64(b.n))
		b.pinner.Unpin()
	default:
		b.cleanup.Stop()
		b.mapping.unmap()
	}
	b.mem = nil
}

// Library is a compiled .metal file.
type Library struct {
	name string
	so   *sharedObject
}

// Name is the source file name.
func (l *Library) Name() string { return l.name }

// Functions lists the non-template kernels of the file.
func (l *Library) Functions() []string { return slices.Clone(l.so.kernels) }

// Pipeline is one kernel of a library.
type Pipeline struct {
	lib      *Library
	function string
}

// Function is the kernel's Metal name.
func (p *Pipeline) Function() string { return p.function }

// MaxTotalThreadsPerThreadgroup is Metal's limit; the emulator does not model register pressure.
func (p *Pipeline) MaxTotalThreadsPerThreadgroup() int { return device.MaxThreadsPerThreadgroup }

// ThreadExecutionWidth is the SIMD-group width.
func (p *Pipeline) ThreadExecutionWidth() int { return 32 }
