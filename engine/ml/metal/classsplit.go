package metal

import (
	"time"

	"easel/engine/ml"
	"easel/kernels/device"
)

// ClassBuffer is a command buffer being encoded with the op class of every dispatch known, so its
// GPU time can be split over classes for every job, not only in profiling mode:
//
//   - sampled: when the buffer times its compute encoders (device.EncoderTimer: Metal's timestamp
//     samples at compute-pass boundaries; the host clock on the emulator), each run of dispatches
//     of one class gets its own encoder, and each encoder's time goes to its class;
//   - estimated split: otherwise the buffer keeps one encoder, and its GPUEndTime − GPUStartTime
//     is apportioned over its dispatches by a cost model (AddFlops): a dispatch costs the threads
//     it launches, plus its floating-point work over FlopsPerThread where the encoding site
//     declares it (GEMMs, attention, convolutions). It is an estimate and is labelled so.
//
// In both cases the class times add up to the buffer's GPU duration exactly: sampled encoder
// times are scaled to it (the gaps between passes are spread over them).
type ClassBuffer struct {
	cb       device.CommandBuffer
	enc      *countingEncoder // the open encoder (nil: none)
	split    bool             // give each run of one class its own encoder
	encoders int
	runs     []classRun
}

// FlopsPerThread converts a dispatch's declared floating-point work into the estimated split's
// unit, a launched thread of a memory-bound kernel: such a thread moves about 8 bytes, which at
// about 100 GB/s (a base M-series chip's memory bandwidth) takes 0.08 ns, the time a GEMM running
// at about 3.5 TFLOP/s (half precision on the same chip) does 280 flops in.
const FlopsPerThread = 280

// AddFlops declares the floating-point work of the dispatches of the current run (the latest
// Encoder call), for the estimated split's cost model.
func (b *ClassBuffer) AddFlops(flops float64) {
	if n := len(b.runs); n > 0 && flops > 0 {
		b.runs[n-1].threads += flops / FlopsPerThread
	}
}

// classRun is a run of dispatches of one class in one encoder, and their cost (threads launched).
type classRun struct {
	class   ml.Class
	encoder int
	threads float64
}

// NewClassBuffer wraps a new command buffer.
func NewClassBuffer(cb device.CommandBuffer) *ClassBuffer {
	return &ClassBuffer{cb: cb, split: device.TimesEncoders(cb)}
}

// CommandBuffer is the wrapped buffer (commit and wait it directly).
func (b *ClassBuffer) CommandBuffer() device.CommandBuffer { return b.cb }

// Encoders is how many compute encoders the buffer has had.
func (b *ClassBuffer) Encoders() int { return b.encoders }

// Encoder is the encoder for the dispatches of an op of class c: a new one when the class changed
// and the buffer times its encoders, else the open one.
func (b *ClassBuffer) Encoder(c ml.Class) device.Encoder {
	last := len(b.runs) - 1
	if b.enc != nil && b.split && b.runs[last].class != c && device.TimesEncoders(b.cb) {
		b.End()
	}
	if b.enc == nil {
		b.enc = &countingEncoder{Encoder: b.cb.ComputeEncoder(), b: b}
		b.encoders++
	}
	if last < 0 || b.runs[last].class != c || b.runs[last].encoder != b.encoders-1 {
		b.runs = append(b.runs, classRun{class: c, encoder: b.encoders - 1})
	}
	return b.enc
}

// End ends the open encoder, if any (before Commit).
func (b *ClassBuffer) End() {
	if b.enc != nil {
		b.enc.Encoder.End()
		b.enc = nil
	}
}

// Split is the buffer's GPU time per class after Wait, and how it was measured.
func (b *ClassBuffer) Split() ([ml.NumClasses]time.Duration, ml.TimeSource) {
	var by [ml.NumClasses]time.Duration
	total := b.cb.GPUDuration()
	if len(b.runs) == 0 || total <= 0 {
		return by, ml.TimeSampled
	}
	times, ok := device.EncoderTimes(b.cb)
	if !ok || len(times) != b.encoders {
		spread(&by, b.runs, total)
		return by, ml.TimeEstimated
	}
	var sum time.Duration
	for _, t := range times {
		sum += t
	}
	if sum <= 0 {
		spread(&by, b.runs, total)
		return by, ml.TimeEstimated
	}
	src := ml.TimeSampled
	var given time.Duration
	for e, i := 0, 0; e < b.encoders; e++ {
		j := i
		for j < len(b.runs) && b.runs[j].encoder == e {
			j++
		}
		if j-i > 1 {
			src = ml.TimeEstimated // the encoder mixed classes: split by cost within it
		}
		share := time.Duration(float64(total) * float64(times[e]) / float64(sum))
		if e == b.encoders-1 {
			share = total - given // the shares add up to the buffer's time exactly
		}
		given += share
		spread(&by, b.runs[i:j], share)
		i = j
	}
	return by, src
}

// spread apportions d over runs by their threads (evenly when none launched any), the last run
// taking the rounding so the parts add up to d.
func spread(by *[ml.NumClasses]time.Duration, runs []classRun, d time.Duration) {
	if len(runs) == 0 {
		return
	}
	var threads float64
	for _, r := range runs {
		threads += r.threads
	}
	var given time.Duration
	for i, r := range runs {
		part := d / time.Duration(len(runs))
		if threads > 0 {
			part = time.Duration(float64(d) * r.threads / threads)
		}
		if i == len(runs)-1 {
			part = d - given
		}
		given += part
		if r.class >= 0 && r.class < ml.NumClasses {
			by[r.class] += part
		}
	}
}

// countingEncoder adds each dispatch's threads to the buffer's current run.
type countingEncoder struct {
	device.Encoder
	b *ClassBuffer
}

func (e *countingEncoder) Dispatch(groups, threads device.Size) {
	e.count(float64(groups.Count()) * float64(threads.Count()))
	e.Encoder.Dispatch(groups, threads)
}

func (e *countingEncoder) DispatchThreads(threads, perGroup device.Size) {
	e.count(float64(threads.Count()))
	e.Encoder.DispatchThreads(threads, perGroup)
}

func (e *countingEncoder) count(threads float64) {
	if n := len(e.b.runs); n > 0 {
		e.b.runs[n-1].threads += threads
	}
}
