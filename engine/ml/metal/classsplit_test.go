package metal

import (
	"testing"
	"time"

	"easel/engine/ml"
	"easel/kernels/device"
)

// fakeBuffer is a command buffer that records encoders and reports given times.
type fakeBuffer struct {
	timed    bool
	encoders int
	gpu      time.Duration
	times    []time.Duration
}

type fakeEncoder struct{ device.Encoder }

func (fakeEncoder) Dispatch(device.Size, device.Size)        {}
func (fakeEncoder) DispatchThreads(device.Size, device.Size) {}
func (fakeEncoder) End()                                     {}

func (f *fakeBuffer) ComputeEncoder() device.Encoder { f.encoders++; return fakeEncoder{} }
func (f *fakeBuffer) Commit()                        {}
func (f *fakeBuffer) Wait() error                    { return nil }
func (f *fakeBuffer) GPUDuration() time.Duration     { return f.gpu }
func (f *fakeBuffer) TimesEncoders() bool            { return f.timed }
func (f *fakeBuffer) EncoderTimes() ([]time.Duration, bool) {
	return f.times, f.timed && len(f.times) == f.encoders
}

// encode puts gemm (2 dispatches), norm, gemm, act on b, declaring the gemms' flops.
func encodeRuns(b *ClassBuffer) {
	one := device.Size{Width: 1, Height: 1, Depth: 1}
	for _, op := range []struct {
		c       ml.Class
		threads int
		flops   float64
	}{{ml.ClassGemm, 10, 2800}, {ml.ClassGemm, 10, 2800}, {ml.ClassNorm, 40, 0}, {ml.ClassGemm, 10, 5600}, {ml.ClassAct, 20, 0}} {
		enc := b.Encoder(op.c)
		b.AddFlops(op.flops)
		enc.Dispatch(device.Size{Width: op.threads, Height: 1, Depth: 1}, one)
	}
	b.End()
}

func TestClassBufferSampled(t *testing.T) {
	f := &fakeBuffer{timed: true, gpu: 100 * time.Millisecond}
	b := NewClassBuffer(f)
	encodeRuns(b)
	if f.encoders != 4 || b.Encoders() != 4 {
		t.Fatalf("%d encoders, want one per run of a class (4)", f.encoders)
	}
	// Encoder times add up to 90 ms; the buffer took 100: the gap is spread in proportion.
	f.times = []time.Duration{45 * time.Millisecond, 9 * time.Millisecond, 27 * time.Millisecond, 9 * time.Millisecond}
	by, src := b.Split()
	if src != ml.TimeSampled {
		t.Errorf("source %v, want sampled", src)
	}
	want := map[ml.Class]time.Duration{ml.ClassGemm: 80 * time.Millisecond, ml.ClassNorm: 10 * time.Millisecond, ml.ClassAct: 10 * time.Millisecond}
	var sum time.Duration
	for c, d := range by {
		sum += d
		if d != want[ml.Class(c)] {
			t.Errorf("%v: %v, want %v", ml.Class(c), d, want[ml.Class(c)])
		}
	}
	if sum != f.gpu {
		t.Errorf("classes add up to %v, the buffer took %v", sum, f.gpu)
	}
}

func TestClassBufferEstimated(t *testing.T) {
	f := &fakeBuffer{gpu: 123456789}
	b := NewClassBuffer(f)
	encodeRuns(b)
	if f.encoders != 1 {
		t.Fatalf("%d encoders on a buffer that cannot time them, want 1", f.encoders)
	}
	by, src := b.Split()
	if src != ml.TimeEstimated {
		t.Errorf("source %v, want estimated split", src)
	}
	// Costs: gemm 10+10+10 threads + 40 flop-threads = 70, norm 40, act 20 (of 130).
	var sum time.Duration
	for _, d := range by {
		sum += d
	}
	if sum != f.gpu {
		t.Errorf("classes add up to %v, the buffer took %v", sum, f.gpu)
	}
	if !(by[ml.ClassGemm] > by[ml.ClassNorm] && by[ml.ClassNorm] > by[ml.ClassAct] && by[ml.ClassAct] > 0) {
		t.Errorf("split %v does not follow the costs gemm 70 > norm 40 > act 20", by)
	}
}
