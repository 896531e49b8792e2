package device

import "time"

// EncoderTimer is a command buffer that times each of its compute encoders on the device: on
// Metal, timestamp counter samples at the start and end of each compute pass
// (MTLCounterSamplingPointAtStageBoundary, which Apple GPUs support; they do not sample at
// dispatch boundaries), resolved from an MTLCounterSampleBuffer after the buffer completes; on the
// emulator, the host clock around each encoder's dispatches. A caller that wants a time per
// kernel class gives each run of one class its own encoder.
type EncoderTimer interface {
	// TimesEncoders says whether encoders started on this buffer from now on are timed. A device
	// without stage-boundary sampling, or a buffer whose sample buffer is full, says false.
	TimesEncoders() bool
	// EncoderTimes is each compute encoder's device time, in the order the encoders were started;
	// valid after Wait. ok is false when any encoder was not timed or a sample came back invalid:
	// then only GPUDuration is known for the buffer.
	EncoderTimes() (times []time.Duration, ok bool)
}

// TimesEncoders says whether cb times its compute encoders (an EncoderTimer that says so).
func TimesEncoders(cb CommandBuffer) bool {
	t, ok := cb.(EncoderTimer)
	return ok && t.TimesEncoders()
}

// EncoderTimes is cb's per-encoder device times, or ok false when cb has none.
func EncoderTimes(cb CommandBuffer) ([]time.Duration, bool) {
	t, ok := cb.(EncoderTimer)
	if !ok {
		return nil, false
	}
	return t.EncoderTimes()
}

// ScaleTicks turns start/end timestamp pairs (in the device clock's unknown unit) into durations
// by scaling them so the span from the first start to the last end equals span, the command
// buffer's GPUEndTime − GPUStartTime. That needs no clock calibration (Metal does not state the
// timestamps' unit). ok is false for an invalid pair (an end before its start, or errorValue,
// Metal's MTLCounterErrorValue for a sample it could not take).
func ScaleTicks(pairs [][2]uint64, span time.Duration, errorValue uint64) ([]time.Duration, bool) {
	if len(pairs) == 0 {
		return nil, true
	}
	first, last := pairs[0][0], pairs[0][1]
	for _, p := range pairs {
		if p[0] == errorValue || p[1] == errorValue || p[1] < p[0] {
			return nil, false
		}
		first, last = min(first, p[0]), max(last, p[1])
	}
	out := make([]time.Duration, len(pairs))
	if last == first {
		return out, true
	}
	perTick := float64(span) / float64(last-first)
	for i, p := range pairs {
		out[i] = time.Duration(float64(p[1]-p[0]) * perTick)
	}
	return out, true
}
