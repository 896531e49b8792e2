package qi21metal

import (
	"context"
	"fmt"
	"time"

	"easel/engine/ml"
	"easel/engine/ml/metal"
	"easel/kernels/device"
)

// recorder encodes a pass into command buffers: a new buffer at every cut (every two blocks, short
// enough for the GPU watchdog) and, in profiling mode, a new buffer whenever the op class changes,
// so each buffer's GPU time belongs to one class. Outside profiling mode each buffer's GPU time is
// still split over classes (metal.ClassBuffer: a compute encoder per run of one class where the
// device timestamps encoders, else an estimated split).
type recorder struct {
	dev     device.Device
	ctx     context.Context
	profile bool

	cb    *metal.ClassBuffer
	class ml.Class
	done  []*metal.ClassBuffer
	err   error
}

func newRecorder(ctx context.Context, dev device.Device, profile bool) *recorder {
	return &recorder{dev: dev, ctx: ctx, profile: profile}
}

// encoder returns the encoder for an op of class c. After an error (or a cancelled context) it
// returns one that drops everything, so encoding code needs no error checks; finish reports it.
func (r *recorder) encoder(c ml.Class) device.Encoder {
	if r.err != nil {
		return dropEncoder{}
	}
	if r.profile && r.cb != nil && r.class != c {
		r.close()
	}
	if r.cb == nil {
		cb, err := r.dev.NewCommandBuffer()
		if err != nil {
			r.err = fmt.Errorf("metal: new command buffer: %w", err)
			return dropEncoder{}
		}
		r.cb = metal.NewClassBuffer(cb)
	}
	r.class = c
	return r.cb.Encoder(c)
}

// flops declares the floating-point work of the op just given an encoder (the estimated split's
// cost model, metal.ClassBuffer).
func (r *recorder) flops(f float64) {
	if r.cb != nil {
		r.cb.AddFlops(f)
	}
}

// close commits the open command buffer.
func (r *recorder) close() {
	if r.cb == nil {
		return
	}
	r.cb.End()
	r.cb.CommandBuffer().Commit()
	r.done = append(r.done, r.cb)
	r.cb = nil
}

// cut ends a command buffer (every two blocks) and stops encoding when the context is done.
func (r *recorder) cut() {
	if !r.profile {
		r.close()
	}
	if r.err == nil && r.ctx != nil {
		if err := r.ctx.Err(); err != nil {
			r.err = fmt.Errorf("metal: stopped: %w", err)
		}
	}
}

// split ends a command buffer in every mode (a GEMM chunk's own buffer) and stops encoding when
// the context is done.
func (r *recorder) split() {
	r.close()
	r.cut()
}

// PassStats is what one prefill or step cost on the device (emulator: CPU wall time, not GPU).
type PassStats struct {
	GPU            time.Duration                // summed GPU time of the pass's command buffers
	CommandBuffers int                          // how many there were
	Encoders       int                          // how many compute encoders they had
	ByClass        [ml.NumClasses]time.Duration // the GPU time split over classes (see recorder)
	// Classes is ByClass with the count of buffers by how it was measured (ml.TimeSource).
	Classes ml.GPUClasses
	Amax    []float32 // EASEL_METAL_AMAX=1 only: stored |max| per half site
	// LoRAFlops is the floating-point work of the LoRA dispatches encoded (down and up
	// projections: 2·rows·rank·(in + out) per adapted layer).
	LoRAFlops float64
}

// finish commits what is open, waits for every buffer and sums their GPU times.
func (r *recorder) finish() (PassStats, error) {
	r.close()
	var st PassStats
	err := r.err
	for _, c := range r.done {
		cb := c.CommandBuffer()
		if werr := cb.Wait(); werr != nil && err == nil {
			err = fmt.Errorf("metal: a command buffer failed: %w", werr)
		}
		st.GPU += cb.GPUDuration()
		st.Encoders += c.Encoders()
		by, src := c.Split()
		if r.profile {
			src = ml.TimeProfiled
		}
		st.Classes.Add(by, src)
	}
	st.ByClass = st.Classes.Time
	st.CommandBuffers = len(r.done)
	r.done = nil
	return st, err
}

// dropEncoder ignores everything: encoding after an error.
type dropEncoder struct{}

func (dropEncoder) SetPipeline(device.Pipeline)              {}
func (dropEncoder) SetBuffer(device.Buffer, int, int)        {}
func (dropEncoder) SetBytes([]byte, int)                     {}
func (dropEncoder) SetThreadgroupMemoryLength(int, int)      {}
func (dropEncoder) Dispatch(device.Size, device.Size)        {}
func (dropEncoder) DispatchThreads(device.Size, device.Size) {}
func (dropEncoder) End()                                     {}
