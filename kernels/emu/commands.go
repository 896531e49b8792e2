//go:build linux && amd64 && cgo

package emu

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"easel/kernels/device"
)

var _ device.EncoderTimer = (*CommandBuffer)(nil)

// CommandBuffer records dispatches and runs them, in order, when committed.
type CommandBuffer struct {
	dev        *Device
	encoders   []*Encoder
	committed  bool
	err        error
	gpuTime    time.Duration
	encTimes   []time.Duration  // each encoder's host time (EncoderTimes)
	ownedBytes []unsafe.Pointer // SetBytes copies, freed after the run
}

// ComputeEncoder starts a compute pass.
func (cb *CommandBuffer) ComputeEncoder() device.Encoder {
	e := &Encoder{cb: cb}
	if cb.committed {
		e.fail("ComputeEncoder called after Commit")
	}
	if n := len(cb.encoders); n > 0 && !cb.encoders[n-1].ended {
		e.fail("ComputeEncoder called before the previous encoder's End")
	}
	cb.encoders = append(cb.encoders, e)
	return e
}

// Commit runs every recorded dispatch now (the emulator is synchronous); Wait reports the outcome.
func (cb *CommandBuffer) Commit() {
	if cb.committed {
		cb.setErr(errors.New("emu: Commit called twice on one command buffer"))
		return
	}
	cb.committed = true
	defer cb.freeOwned()
	for _, e := range cb.encoders {
		if e.err != nil {
			cb.setErr(e.err)
			return
		}
		if !e.ended {
			cb.setErr(errors.New("emu: Commit with an encoder that was not ended"))
			return
		}
	}
	cb.dev.run.Lock()
	defer cb.dev.run.Unlock()
	f := cb.dev.faults.begin(cb)
	if f.err != nil {
		cb.setErr(f.err)
		return
	}
	start := time.Now()
	ran := 0
	for _, e := range cb.encoders {
		encStart := time.Now()
		for i, dp := range e.dispatches {
			if ran == f.stopAfter {
				cb.setErr(f.stopErr)
				return
			}
			if err := dp.pipeline.lib.so.runKernel(dp.pipeline.function, &dp.launch); err != nil {
				cb.setErr(fmt.Errorf("emu: dispatch %d (%s): %w", i, dp.pipeline.function, err))
				return
			}
			cb.dev.faults.after(f.fault, &dp)
			ran++
		}
		cb.encTimes = append(cb.encTimes, time.Since(encStart))
	}
	cb.gpuTime = time.Since(start)
}

// Wait returns the first encoding or execution error.
func (cb *CommandBuffer) Wait() error {
	if !cb.committed {
		return errors.New("emu: Wait called before Commit")
	}
	return cb.err
}

// GPUDuration is the wall-clock time the emulator spent running the buffer (not a GPU figure).
func (cb *CommandBuffer) GPUDuration() time.Duration { return cb.gpuTime }

// TimesEncoders is true unless Options.NoEncoderTiming: the emulator times every encoder with
// the host clock, as a Mac samples timestamps at each compute pass's boundaries.
func (cb *CommandBuffer) TimesEncoders() bool { return !cb.dev.opts.NoEncoderTiming }

// EncoderTimes is the host time each encoder's dispatches took (not a GPU figure), in the order
// the encoders were started; ok is false with Options.NoEncoderTiming or when the buffer did not
// run to its end.
func (cb *CommandBuffer) EncoderTimes() ([]time.Duration, bool) {
	if cb.dev.opts.NoEncoderTiming || !cb.committed || len(cb.encTimes) != len(cb.encoders) {
		return nil, false
	}
	return cb.encTimes, true
}

func (cb *CommandBuffer) setErr(err error) {
	if cb.err == nil {
		cb.err = err
	}
}

func (cb *CommandBuffer) freeOwned() {
	for _, p := range cb.ownedBytes {
		freeC(p)
	}
	cb.ownedBytes = nil
}

// dispatch is one recorded dispatchThreadgroups with its bindings.
type dispatch struct {
	pipeline *Pipeline
	launch   launch
	bound    [device.MaxBufferIndex + 1]binding // the buffers behind launch.buffers (SetBuffer only)
}

// binding is a buffer bound at an offset, kept so an injected fault can find a kernel's output.
type binding struct {
	buf *Buffer
	off int
}

// Encoder records dispatches; bindings carry over from one dispatch to the next.
type Encoder struct {
	cb         *CommandBuffer
	pipeline   *Pipeline
	bound      launch
	bindings   [device.MaxBufferIndex + 1]binding
	dispatches []dispatch
	ended      bool
	err        error
}

func (e *Encoder) fail(format string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf("emu: "+format, args...)
	}
}

func (e *Encoder) usable(what string) bool {
	if e.ended {
		e.fail("%s after End", what)
	}
	return e.err == nil
}

// SetPipeline selects the kernel; p must come from the emulated device.
func (e *Encoder) SetPipeline(p device.Pipeline) {
	if !e.usable("SetPipeline") {
		return
	}
	ep, ok := p.(*Pipeline)
	if !ok || ep == nil {
		e.fail("SetPipeline with a pipeline that is not from the emulated device")
		return
	}
	e.pipeline = ep
}

// SetBuffer binds buf from offset to [[buffer(index)]].
func (e *Encoder) SetBuffer(buf device.Buffer, offset, index int) {
	if !e.usable("SetBuffer") {
		return
	}
	b, ok := buf.(*Buffer)
	switch {
	case index < 0 || index > device.MaxBufferIndex:
		e.fail("SetBuffer index %d is outside 0..%d", index, device.MaxBufferIndex)
	case !ok || b == nil || b.mem == nil:
		e.fail("SetBuffer(index %d) with a buffer that is released or not from the emulated device", index)
	case offset < 0 || offset >= b.n:
		e.fail("SetBuffer(index %d) offset %d is outside the %d-byte buffer", index, offset, b.n)
	default:
		e.bound.buffers[index] = uintptr(unsafe.Add(b.mem, offset))
		e.bindings[index] = binding{b, offset}
	}
}

// SetBytes copies data into [[buffer(index)]].
func (e *Encoder) SetBytes(data []byte, index int) {
	if !e.usable("SetBytes") {
		return
	}
	switch {
	case index < 0 || index > device.MaxBufferIndex:
		e.fail("SetBytes index %d is outside 0..%d", index, device.MaxBufferIndex)
	case len(data) == 0 || len(data) > device.MaxSetBytesLength:
		e.fail("SetBytes(index %d) with %d bytes: Metal accepts 1..%d; use a buffer", index, len(data), device.MaxSetBytesLength)
	default:
		p := allocC(len(data))
		copy(unsafe.Slice((*byte)(p), len(data)), data)
		e.cb.ownedBytes = append(e.cb.ownedBytes, p)
		e.bound.buffers[index] = uintptr(p)
		e.bindings[index] = binding{}
	}
}

// SetThreadgroupMemoryLength sizes [[threadgroup(index)]].
func (e *Encoder) SetThreadgroupMemoryLength(length, index int) {
	if !e.usable("SetThreadgroupMemoryLength") {
		return
	}
	if index < 0 || index > device.MaxThreadgroupMemoryIndex || length < 0 || length > device.MaxThreadgroupMemoryLength {
		e.fail("SetThreadgroupMemoryLength(%d, index %d): Metal allows 0..%d bytes at index 0..%d",
			length, index, device.MaxThreadgroupMemoryLength, device.MaxThreadgroupMemoryIndex)
		return
	}
	e.bound.tgLen[index] = length
}

// Dispatch records threadgroups × threadsPerGroup threads of the current pipeline.
func (e *Encoder) Dispatch(threadgroups, threadsPerGroup device.Size) {
	e.record(threadgroups, threadsPerGroup, nil)
}

// DispatchThreads records a grid of exactly threads threads in groups of threadsPerGroup; the
// groups at the far edges are smaller (non-uniform threadgroups).
func (e *Encoder) DispatchThreads(threads, threadsPerGroup device.Size) {
	if !e.usable("DispatchThreads") {
		return
	}
	t := threadsPerGroup
	if t.Width <= 0 || t.Height <= 0 || t.Depth <= 0 {
		e.fail("DispatchThreads with %v threads per threadgroup", t)
		return
	}
	groups := device.Size{
		Width:  (threads.Width + t.Width - 1) / t.Width,
		Height: (threads.Height + t.Height - 1) / t.Height,
		Depth:  (threads.Depth + t.Depth - 1) / t.Depth,
	}
	e.record(groups, t, &threads)
}

// record checks and stores one dispatch; grid is the thread grid of a DispatchThreads.
func (e *Encoder) record(threadgroups, threadsPerGroup device.Size, grid *device.Size) {
	if !e.usable("Dispatch") {
		return
	}
	if e.pipeline == nil {
		e.fail("Dispatch before SetPipeline")
		return
	}
	g, t := threadgroups, threadsPerGroup
	if g.Width < 0 || g.Height < 0 || g.Depth < 0 {
		e.fail("Dispatch of %s with threadgroups %v: negative extent", e.pipeline.function, g)
		return
	}
	if t.Width <= 0 || t.Height <= 0 || t.Depth <= 0 || t.Count() > device.MaxThreadsPerThreadgroup {
		e.fail("Dispatch of %s with %v threads per threadgroup: Metal allows 1..%d in all", e.pipeline.function, t, device.MaxThreadsPerThreadgroup)
		return
	}
	if g.Count() == 0 {
		return
	}
	l := e.bound
	l.groups = [3]int{g.Width, g.Height, g.Depth}
	l.threads = [3]int{t.Width, t.Height, t.Depth}
	if grid != nil {
		l.nonuniform = true
		l.gridThreads = [3]int{grid.Width, grid.Height, grid.Depth}
	}
	l.workers = e.cb.dev.opts.Workers
	l.order = e.cb.dev.opts.Order
	e.dispatches = append(e.dispatches, dispatch{pipeline: e.pipeline, launch: l, bound: e.bindings})
}

// End finishes the pass.
func (e *Encoder) End() {
	if e.ended {
		e.fail("End called twice")
	}
	e.ended = true
}
