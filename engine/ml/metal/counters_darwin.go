//go:build darwin

package metal

import (
	"encoding/binary"
	"sync"
	"time"
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/metal"

	"easel/engine/objcsafe"
	"easel/kernels/device"
)

// This file times each compute encoder on the GPU (device.EncoderTimer): where the device samples
// counters at stage boundaries (MTLCounterSamplingPointAtStageBoundary; Apple GPUs do, at dispatch
// boundaries they do not), every compute pass of a command buffer writes a GPU timestamp at its
// start and at its end into an MTLCounterSampleBuffer of the "timestamp" counter set. After the
// buffer completes, resolveCounterRange: gives the timestamps (MTLCounterResultTimestamp, in the
// GPU clock's unstated unit), which device.ScaleTicks turns into durations against the buffer's
// own GPUEndTime − GPUStartTime. Sample buffers are pooled per device.

// samplesPerBuffer is how many timestamps one command buffer's sample buffer holds: two per
// encoder, so 256 compute passes (4 KiB; a two-block command buffer of the denoiser has about 30).
const samplesPerBuffer = 512

// counterErrorValue is MTLCounterErrorValue: a sample the GPU could not take.
const counterErrorValue = ^uint64(0)

// sampler makes and pools a device's timestamp sample buffers; nil when the device cannot sample
// at stage boundaries or has no timestamp counter set.
type sampler struct {
	dev metal.DeviceObject
	set metal.CounterSetObject

	mu   sync.Mutex
	free []metal.CounterSampleBufferObject
	bad  bool // making a sample buffer failed once: stop trying
}

// newSampler is the device's sampler, or nil when it cannot time compute passes.
func newSampler(dev metal.DeviceObject) *sampler {
	if !dev.HasSupportsCounterSampling() || !objcsafe.Bool(dev, "supportsCounterSampling:", metal.CounterSamplingPointAtStageBoundary) || !dev.HasCounterSets() {
		return nil
	}
	var s *sampler
	objcsafe.WithPool(func() { // the array and the names are autoreleased
		for _, o := range objcsafe.ArrayResult(dev, "counterSets") { // an empty array is read as empty (objcsafe)
			set := metal.CounterSetObject{Object: o}
			if set.Name() == string(metal.CommonCounterSetTimestamp) {
				set.Retain() // kept beyond the pool, for the life of the device
				s = &sampler{dev: dev, set: set}
				return
			}
		}
	})
	return s
}

// take returns a pooled or new sample buffer; ok false when none can be made.
func (s *sampler) take() (metal.CounterSampleBufferObject, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		b := s.free[n-1]
		s.free = s.free[:n-1]
		return b, true
	}
	if s.bad {
		return metal.CounterSampleBufferObject{}, false
	}
	var b metal.CounterSampleBufferObject
	objcsafe.WithPool(func() {
		desc := metal.NewCounterSampleBufferDescriptor() // new + autorelease: the pool frees it, never Release
		desc.SetCounterSetObject(s.set)                  // Metal's own counter set, not an adaptor
		desc.SetSampleCount(samplesPerBuffer)
		desc.SetStorageMode(metal.StorageModeShared)
		var nsErr unsafe.Pointer
		b = s.dev.NewCounterSampleBufferWithDescriptorError(desc, unsafe.Pointer(&nsErr))
	})
	if b.IsNil() {
		s.bad = true
		return b, false
	}
	return b, true
}

// give returns a sample buffer to the pool.
func (s *sampler) give(b metal.CounterSampleBufferObject) {
	s.mu.Lock()
	s.free = append(s.free, b)
	s.mu.Unlock()
}

// timedEncoder starts a compute pass on cb that samples timestamps into c's sample buffer at
// index 2i (start) and 2i+1 (end); ok false when c cannot time another pass.
func (c *darwinCommandBuffer) timedEncoder() (metal.ComputeCommandEncoderObject, bool) {
	if !c.TimesEncoders() {
		return metal.ComputeCommandEncoderObject{}, false
	}
	if c.samples.IsNil() {
		b, ok := c.sampler.take()
		if !ok {
			c.untimed = true
			return metal.ComputeCommandEncoderObject{}, false
		}
		c.samples = b
	}
	i := uint(c.timed)
	var enc metal.ComputeCommandEncoderObject
	objcsafe.WithPool(func() {
		desc := metal.ComputePassDescriptor_ComputePassDescriptor()
		att := desc.SampleBufferAttachments().ObjectAtIndexedSubscript(0)
		att.SetSampleBufferObject(c.samples) // Metal's own sample buffer, not an adaptor
		att.SetStartOfEncoderSampleIndex(2 * i)
		att.SetEndOfEncoderSampleIndex(2*i + 1)
		enc = c.cb.ComputeCommandEncoderWithDescriptor(desc)
		if !enc.IsNil() {
			enc.Retain()
		}
	})
	if enc.IsNil() {
		c.untimed = true
		return enc, false
	}
	c.timed++
	return enc, true
}

// TimesEncoders says whether the next encoder will be timed: the device samples at stage
// boundaries, no encoder of this buffer went untimed, and the sample buffer has room.
func (c *darwinCommandBuffer) TimesEncoders() bool {
	return c.sampler != nil && !c.untimed && 2*(c.timed+1) <= samplesPerBuffer
}

// EncoderTimes resolves the sample buffer after Wait (see the file comment).
func (c *darwinCommandBuffer) EncoderTimes() ([]time.Duration, bool) {
	return c.encTimes, c.encTimesOK
}

// resolveTimes reads the timestamps of the timed encoders after the buffer completed and returns
// the sample buffer to the pool.
func (c *darwinCommandBuffer) resolveTimes() {
	if c.samples.IsNil() {
		return
	}
	defer func() {
		c.sampler.give(c.samples)
		c.samples = metal.CounterSampleBufferObject{}
	}()
	if c.untimed || c.timed == 0 || c.timed != c.encoders || c.err != nil {
		return
	}
	var raw []byte
	objcsafe.WithPool(func() {
		raw = c.samples.ResolveCounterRange(foundation.Range{Location: 0, Length: uint64(2 * c.timed)})
	})
	if len(raw) < 16*c.timed {
		return
	}
	pairs := make([][2]uint64, c.timed)
	for i := range pairs {
		pairs[i] = [2]uint64{binary.LittleEndian.Uint64(raw[16*i:]), binary.LittleEndian.Uint64(raw[16*i+8:])}
	}
	c.encTimes, c.encTimesOK = device.ScaleTicks(pairs, c.gpu, counterErrorValue)
}
