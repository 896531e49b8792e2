//go:build linux && amd64 && cgo

package emu

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"

	"easel/kernels/device"
)

// faultState is a device's injected fault and how often it fired.
type faultState struct {
	mu    sync.Mutex
	fault Fault
	oomed int // command buffers failed by OOM so far
	fired int
}

// InjectFault makes the device show f from the next command buffer on (Fault{} removes it) and
// resets the count FaultsFired reports: the test hook behind FaultEnv.
func (d *Device) InjectFault(f Fault) {
	if f.Kind == Overflow && f.HalfMax <= 0 {
		f.HalfMax = DefaultHalfMax
	}
	if f.Kind == Watchdog && f.Dispatches <= 0 && f.Work <= 0 {
		f.Dispatches = DefaultWatchdogDispatches
	}
	d.faults.mu.Lock()
	defer d.faults.mu.Unlock()
	d.faults.fault, d.faults.oomed, d.faults.fired = f, 0, 0
}

// Fault is the injected fault.
func (d *Device) Fault() Fault {
	d.faults.mu.Lock()
	defer d.faults.mu.Unlock()
	return d.faults.fault
}

// FaultsFired is how many times the injected fault changed a command buffer's outcome since it
// was injected: outputs corrupted or overflowed (counted per dispatch), command buffers stopped.
func (d *Device) FaultsFired() int {
	d.faults.mu.Lock()
	defer d.faults.mu.Unlock()
	return d.faults.fired
}

// commitFault is what the fault does to one command buffer.
type commitFault struct {
	fault     Fault
	err       error // fail before running anything
	stopAfter int   // run this many dispatches, then fail with stopErr (-1: run all)
	stopErr   error
}

// begin decides the fate of a command buffer about to run.
func (s *faultState) begin(cb *CommandBuffer) commitFault {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := commitFault{fault: s.fault, stopAfter: -1}
	switch s.fault.Kind {
	case OOM:
		if _, live := cb.dev.LiveBuffers(); s.fault.Bytes > 0 && live > s.fault.Bytes {
			s.fired++
			c.err = &device.CommandBufferError{Kind: device.ErrorOutOfMemory,
				Message: fmt.Sprintf("emu: injected fault: the device is out of memory for this command buffer (Metal's OutOfMemory; %d bytes of buffers, the fault allows %d)", live, s.fault.Bytes)}
		} else if s.fault.Bytes == 0 && (s.fault.Count == 0 || s.oomed < s.fault.Count) {
			s.oomed++
			s.fired++
			c.err = &device.CommandBufferError{Kind: device.ErrorOutOfMemory,
				Message: "emu: injected fault: the device is out of memory for this command buffer (Metal's OutOfMemory)"}
		}
	case Watchdog:
		n := 0
		var work int64
		for _, e := range cb.encoders {
			for i := range e.dispatches {
				if s.fault.Work > 0 && c.stopAfter < 0 {
					if work += gemmWork(&e.dispatches[i]); work > s.fault.Work {
						c.stopAfter = n
					}
				}
				n++
			}
		}
		switch {
		case c.stopAfter >= 0:
			s.fired++
			c.stopErr = &device.CommandBufferError{Kind: device.ErrorTimeout,
				Message: fmt.Sprintf("emu: injected fault: the GPU watchdog stopped a command buffer whose GEMMs do more than %d multiply-adds after %d of its %d dispatches (Impacting Interactivity)", s.fault.Work, c.stopAfter, n)}
		case s.fault.Dispatches > 0 && n > s.fault.Dispatches:
			s.fired++
			c.stopAfter = s.fault.Dispatches
			c.stopErr = &device.CommandBufferError{Kind: device.ErrorTimeout,
				Message: fmt.Sprintf("emu: injected fault: the GPU watchdog stopped a command buffer of %d dispatches after %d (Impacting Interactivity)", n, s.fault.Dispatches)}
		}
	}
	return c
}

// gemmWork is the multiply-adds of a qi_mm_* dispatch (n·rows·k per z slice, read from its
// MmParams), 0 for other kernels.
func gemmWork(dp *dispatch) int64 {
	p := dp.launch.buffers[mmParamsBuffer]
	if !strings.HasPrefix(dp.pipeline.function, "qi_mm_") || p == 0 {
		return 0
	}
	n, rows, k := int64(cUint32(p)), int64(cUint32(p+4)), int64(cUint32(p+8))
	return n * rows * k * int64(max(dp.launch.groups[2], 1))
}

// gemmOutputs are the GEMM-like kernels and the buffer index of their output (and every qi_mm_*
// kernel, the denoiser's GEMM and its variants, at 7).
var gemmOutputs = map[string]int{"qi_mm_q4tp": 7, "qi_mm_q8": 7, "ops_linear": 2, "ops_mm": 2, "vae_conv": 2}

// halfSites are the denoiser's kernels that store a guarded half activation, and its buffer.
var halfSites = map[string]int{"qi_rowop": 2, "qi_flash": 1, "qi_swiglu": 1}

// mmParamsBuffer and mmEpiOffset locate MmParams.epi (1: half output) of qi_mm_*.
const mmParamsBuffer, mmEpiOffset = 8, 20

// corruptWord is what CorruptGEMM writes: 8.4e6 as a float, two halves of 14.0.
const corruptWord = 0x4b004b00

// after applies a per-dispatch fault to what the dispatch just wrote.
func (s *faultState) after(f Fault, dp *dispatch) {
	fn := dp.pipeline.function
	if strings.HasPrefix(fn, "qi_flash") {
		fn = "qi_flash" // the variants (qi_flash_st, qi_flash_k64) bind as the baseline does
	}
	isMM := strings.HasPrefix(fn, "qi_mm_") // qi_mm_q4tp, qi_mm_q8 and their variants: y at 7, MmParams at 8
	switch f.Kind {
	case CorruptGEMM:
		idx, ok := gemmOutputs[fn]
		if isMM {
			idx, ok = 7, true
		}
		if !ok || dp.bound[idx].buf == nil {
			return
		}
		out := dp.bound[idx].buf.Bytes()[dp.bound[idx].off:]
		for i := 0; i+4 <= len(out); i += 61 * 4 {
			binary.LittleEndian.PutUint32(out[i:], corruptWord)
		}
		s.fire()
	case Overflow:
		idx, ok := halfSites[fn]
		if isMM {
			p := dp.launch.buffers[mmParamsBuffer]
			if p == 0 || cUint32(p+mmEpiOffset) != 1 {
				return
			}
			idx, ok = 7, true
		}
		if !ok || dp.bound[idx].buf == nil {
			return
		}
		if overflowHalves(dp.bound[idx].buf.Bytes()[dp.bound[idx].off:], f.HalfMax) {
			s.fire()
		}
	}
}

func (s *faultState) fire() {
	s.mu.Lock()
	s.fired++
	s.mu.Unlock()
}

// overflowHalves sets every half of b whose magnitude passes max to ±inf and reports whether any
// did.
func overflowHalves(b []byte, max float32) bool {
	limit := halfBitsBelow(max)
	hit := false
	for i := 0; i+2 <= len(b); i += 2 {
		h := binary.LittleEndian.Uint16(b[i:])
		if mag := h & 0x7fff; mag > limit && mag < 0x7c00 {
			binary.LittleEndian.PutUint16(b[i:], h&0x8000|0x7c00)
			hit = true
		}
	}
	return hit
}

// halfBitsBelow is the bit pattern of the largest half not above v (v ≥ 0; halves order like
// their magnitude bits).
func halfBitsBelow(v float32) uint16 {
	if v >= 65504 {
		return 0x7bff
	}
	lo, hi := uint16(0), uint16(0x7bff)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if halfToFloat(mid) <= v {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// halfToFloat converts non-negative finite half bits.
func halfToFloat(h uint16) float32 {
	e, m := int(h>>10), float64(h&0x3ff)
	if e == 0 {
		return float32(m * math.Pow(2, -24))
	}
	return float32((1 + m/1024) * math.Pow(2, float64(e-15)))
}
