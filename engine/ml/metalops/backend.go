package metalops

import (
	"fmt"
	"math"
	"time"
	"unsafe"

	"easel/engine/ml"
	"easel/engine/ml/metal"
	"easel/engine/quant"
	"easel/kernels"
	"easel/kernels/device"
)

// cbDispatches is how many dispatches a command buffer holds before it is committed: a few
// layers' worth, well inside the GPU watchdog at the published sizes.
const cbDispatches = 64

// Backend is the ml.Backend op set on a device. It is
// not safe for concurrent use.
type Backend struct {
	dev   device.Device
	pipes *pipelines
	arena *metal.WeightArena // the weights read in place while a call runs (nil: none)

	halfWeights map[uintptr]halfWeight   // weights converted to half on the device (not in the arena)
	linear      map[uintptr]linearWeight // linear-layer weights by payload
	extra       []device.Buffer          // side buffers of linear weights (q8 scales, copied codes)
	amaxSlot    *tensor                  // one float slot for the half guard's amax (serial dispatches share it)
	pool        map[int][]*storage       // freed activation buffers by byte length
	all         map[*storage]bool        // every buffer made and not yet released
	live, held  int64                    // bytes of live tensors; of live and pooled buffers
	peak        int64                    // largest held
	budget      int64                    // held above this trims the pool first (0: no limit)
	declined    error                    // the first *metal.Declined of the call in progress
	weightBytes int64                    // converted weights

	cb         *metal.ClassBuffer // the open command buffer (nil: none)
	dispatches int
	pending    []pendingBuffer
	class      ml.Class      // of the open command buffer's latest op
	profile    bool          // one command buffer per run of one class (SetProfile)
	gpu        time.Duration // GPU time of every waited command buffer
	timings    ml.Timings    // per class, profiling mode only
	gpuClasses ml.GPUTimings // per class, always (metal.ClassBuffer's split)
	flops      float64       // the next dispatch's floating-point work (the split's cost model)
}

type halfWeight struct {
	buf device.Buffer
	off int
}

// New compiles the kernels on dev.
func New(dev device.Device) (*Backend, error) {
	p, err := buildPipelines(dev)
	if err != nil {
		return nil, err
	}
	slot, err := dev.NewBuffer(16)
	if err != nil {
		return nil, fmt.Errorf("metalops: the guard's amax slot: %w", err)
	}
	return &Backend{
		dev:         dev,
		pipes:       p,
		amaxSlot:    &tensor{st: &storage{buf: slot, bytes: 16}, shape: []int{1}, view: true},
		halfWeights: map[uintptr]halfWeight{},
		linear:      map[uintptr]linearWeight{},
		pool:        map[int][]*storage{},
		all:         map[*storage]bool{},
	}, nil
}

// pipelines are the kernels of vae.metal and ops.metal.
type pipelines struct {
	amax, conv, chnorm, elt, upsample, shuffle, transpose device.Pipeline
	linear, mm, softmax, rownorm, headrope                device.Pipeline
}

// kernel is one pipeline to look up: where it goes and its function name.
type kernel struct {
	dst *device.Pipeline
	fn  string
}

func buildPipelines(dev device.Device) (*pipelines, error) {
	p := &pipelines{}
	for _, lib := range []struct {
		file    string
		kernels []kernel
	}{
		{"vae.metal", []kernel{{&p.amax, "vae_amax"}, {&p.conv, "vae_conv"}, {&p.chnorm, "vae_chnorm"}, {&p.elt, "vae_elt"}, {&p.upsample, "vae_upsample"}, {&p.shuffle, "vae_shuffle"}, {&p.transpose, "vae_transpose"}}},
		{"ops.metal", []kernel{{&p.linear, "ops_linear"}, {&p.mm, "ops_mm"}, {&p.softmax, "ops_softmax"}, {&p.rownorm, "ops_rownorm"}, {&p.headrope, "ops_headrope"}}},
	} {
		src, err := kernels.Source(lib.file)
		if err != nil {
			return nil, err
		}
		l, err := dev.NewLibrary(lib.file, src)
		if err != nil {
			return nil, fmt.Errorf("metalops: compiling %s on %s: %w", lib.file, dev.Name(), err)
		}
		for _, k := range lib.kernels {
			if *k.dst, err = dev.Pipeline(l, k.fn); err != nil {
				return nil, fmt.Errorf("metalops: pipeline %s of %s: %w", k.fn, lib.file, err)
			}
			if err := kernels.FitsBaseline(k.fn, *k.dst); err != nil {
				return nil, fmt.Errorf("metalops: %w", err)
			}
		}
	}
	return p, nil
}

// Name identifies the backend in reports.
func (b *Backend) Name() string { return "metalops (" + b.dev.Name() + ")" }

// Timings is the GPU time per op class in profiling mode (SetProfile), else empty: ops are
// asynchronous, so their time is known only per command buffer (DeviceTime).
func (b *Backend) Timings() *ml.Timings { return &b.timings }

// GPUClasses is the GPU time per op class of every waited command buffer, in any mode, and how
// it was measured (sampled at encoder boundaries, an estimated split, or profiling mode).
func (b *Backend) GPUClasses() ml.GPUClasses { return b.gpuClasses.Snapshot() }

// DeviceTime is the GPU time of every command buffer waited for so far (wall-clock CPU time on
// the emulator).
func (b *Backend) DeviceTime() time.Duration { return b.gpu }

// PeakBytes is the most activation memory the backend has held at once (live and pooled).
func (b *Backend) PeakBytes() int64 { return b.peak }

// encoder returns the open compute encoder for an op of class c, starting a command buffer when
// none is open; in profiling mode a change of class starts a new one, so each buffer's GPU time
// belongs to one class.
func (b *Backend) encoder(c ml.Class) (device.Encoder, error) {
	if b.profile && b.cb != nil && c != b.class {
		b.commit()
	}
	b.class = c
	if b.cb == nil {
		cb, err := b.dev.NewCommandBuffer()
		if err != nil {
			return nil, fmt.Errorf("metalops: new command buffer: %w", err)
		}
		b.cb = metal.NewClassBuffer(cb)
	}
	enc := b.cb.Encoder(c)
	b.cb.AddFlops(b.flops)
	b.flops = 0
	return enc, nil
}

// dispatched counts one dispatch and commits the buffer when it is full.
func (b *Backend) dispatched() {
	b.dispatches++
	if b.dispatches >= b.dispatchesPerBuffer() {
		b.commit()
	}
}

// commit submits the open command buffer without waiting.
func (b *Backend) commit() {
	if b.cb == nil {
		return
	}
	b.cb.End()
	b.cb.CommandBuffer().Commit()
	b.pending = append(b.pending, pendingBuffer{b.cb, b.class})
	b.cb, b.dispatches = nil, 0
}

// sync commits and waits for all work, summing GPU time; it reports the first failure.
func (b *Backend) sync() error {
	b.commit()
	var err error
	for _, p := range b.pending {
		cb := p.cb.CommandBuffer()
		if werr := cb.Wait(); werr != nil && err == nil {
			err = fmt.Errorf("metalops: a command buffer failed: %w", werr)
		}
		d := cb.GPUDuration()
		b.gpu += d
		by, src := p.cb.Split()
		if b.profile {
			b.timings.Add(p.class, d, 0)
			src = ml.TimeProfiled
		}
		b.gpuClasses.Add(by, src)
	}
	b.pending = nil
	return err
}

// alloc returns a buffer of n float32 elements: a pooled one of the same length (its old contents
// are overwritten by work queued after the work that used it) or a new zeroed one.
func (b *Backend) alloc(n int, fresh bool) (*storage, bool, error) {
	bytes := 4 * max(n, 1)
	if !fresh {
		if free := b.pool[bytes]; len(free) > 0 {
			st := free[len(free)-1]
			b.pool[bytes] = free[:len(free)-1]
			st.freed = false
			b.live += int64(bytes)
			return st, true, nil
		}
	}
	if b.budget > 0 && b.held+int64(bytes) > b.budget {
		if err := b.trim(); err != nil {
			return nil, false, err
		}
	}
	maxBuffer, _ := metal.DeviceLimits(b.dev)
	if int64(bytes) > maxBuffer {
		b.declined = metal.Decline("the VAE needs an activation buffer of %s, more than this GPU's largest buffer (%s)", metal.FormatBytes(int64(bytes)), metal.FormatBytes(maxBuffer))
		return nil, false, b.declined
	}
	buf, err := b.dev.NewBuffer(bytes)
	if err != nil {
		// Give the pooled buffers back and try once more.
		if serr := b.trim(); serr != nil {
			return nil, false, serr
		}
		if buf, err = b.dev.NewBuffer(bytes); err != nil {
			return nil, false, fmt.Errorf("metalops: a %s activation buffer: %w", metal.FormatBytes(int64(bytes)), err)
		}
	}
	b.live += int64(bytes)
	b.held += int64(bytes)
	b.peak = max(b.peak, b.held)
	st := &storage{buf: buf, bytes: bytes}
	b.all[st] = true
	return st, false, nil
}

// trim waits for the device and releases every pooled buffer.
func (b *Backend) trim() error {
	if err := b.sync(); err != nil {
		return err
	}
	for k, free := range b.pool {
		for _, st := range free {
			st.buf.Release()
			delete(b.all, st)
			b.held -= int64(st.bytes)
		}
		delete(b.pool, k)
	}
	return nil
}

// New allocates a zeroed tensor.
func (b *Backend) New(shape ...int) (ml.Tensor, error) {
	if err := checkShape("New", shape); err != nil {
		return nil, err
	}
	st, reused, err := b.alloc(count(shape), false)
	if err != nil {
		return nil, err
	}
	t := &tensor{st: st, shape: append([]int(nil), shape...)}
	if reused {
		if err := b.elt(kernels.EltZero, t, nil, t, 0); err != nil {
			b.Free(t)
			return nil, err
		}
	}
	return t, nil
}

func checkShape(op string, shape []int) error {
	if len(shape) == 0 {
		return fmt.Errorf("metalops %s: an empty shape", op)
	}
	n := int64(1)
	for _, d := range shape {
		if d <= 0 {
			return fmt.Errorf("metalops %s: shape %v has a dimension ≤ 0", op, shape)
		}
		n *= int64(d)
	}
	if n > math.MaxUint32/4 {
		return fmt.Errorf("metalops %s: shape %v has more elements than the kernels index (2³⁰)", op, shape)
	}
	return nil
}

// Upload copies host data into a new buffer (never a pooled one: queued work may still read it).
func (b *Backend) Upload(data []float32, shape ...int) (ml.Tensor, error) {
	if err := checkShape("Upload", shape); err != nil {
		return nil, err
	}
	if len(data) != count(shape) {
		return nil, fmt.Errorf("metalops Upload: %d values for shape %v", len(data), shape)
	}
	st, _, err := b.alloc(len(data), true)
	if err != nil {
		return nil, err
	}
	copy(device.View[float32](st.buf), data)
	return &tensor{st: st, shape: append([]int(nil), shape...)}, nil
}

// Download waits for every queued op and copies the tensor to the host.
func (b *Backend) Download(x ml.Tensor) ([]float32, error) {
	t, err := b.own("Download", x)
	if err != nil {
		return nil, err
	}
	if err := b.sync(); err != nil {
		return nil, err
	}
	out := make([]float32, t.n())
	copy(out, device.View[float32](t.st.buf)[t.off:])
	return out, nil
}

// Slice is a view of count(shape) elements from offset.
func (b *Backend) Slice(x ml.Tensor, offset int, shape ...int) (ml.Tensor, error) {
	t, err := b.own("Slice", x)
	if err != nil {
		return nil, err
	}
	if err := checkShape("Slice", shape); err != nil {
		return nil, err
	}
	if offset < 0 || t.off+offset+count(shape) > t.st.bytes/4 {
		return nil, fmt.Errorf("metalops Slice: %v at element %d runs past the %d elements of the storage", shape, offset, t.st.bytes/4)
	}
	return &tensor{st: t.st, off: t.off + offset, shape: append([]int(nil), shape...), view: true}, nil
}

// Free returns a tensor's buffer to the pool (views free nothing).
func (b *Backend) Free(x ml.Tensor) {
	t, ok := x.(*tensor)
	if !ok || t == nil || t.view || t.st.freed {
		return
	}
	t.st.freed = true
	b.live -= int64(t.st.bytes)
	b.pool[t.st.bytes] = append(b.pool[t.st.bytes], t.st)
}

// Release waits for the device and frees the pooled activation buffers and the converted
// weights (live tensors, such as the model's biases, and the arena stay).
func (b *Backend) Release() error {
	err := b.trim()
	for k, w := range b.halfWeights {
		w.buf.Release()
		delete(b.halfWeights, k)
	}
	for _, x := range b.extra {
		x.Release()
	}
	b.extra = nil
	b.linear = map[uintptr]linearWeight{}
	b.weightBytes = 0
	return err
}

// pendingBuffer is a committed command buffer and the class of its latest op (its only class in
// profiling mode).
type pendingBuffer struct {
	cb    *metal.ClassBuffer
	class ml.Class
}

// SetProfile turns the profiling mode on or off (EASEL_METAL_PROF): a command buffer per run of
// ops of one class, so Timings holds GPU time per class. Slower: for measuring.
func (b *Backend) SetProfile(on bool) {
	b.commit()
	b.profile = on
}

// Device is the device the backend encodes for.
func (b *Backend) Device() device.Device { return b.dev }

// SetArena makes the kernels read weights placed in a (nil: none) in place.
func (b *Backend) SetArena(a *metal.WeightArena) { b.arena = a }

// SetBudget makes the backend give its pooled buffers back before holding more than budget bytes
// of tensors (0: no limit).
func (b *Backend) SetBudget(budget int64) { b.budget = budget }

// LiveBytes is the bytes of the tensors allocated and not freed.
func (b *Backend) LiveBytes() int64 { return b.live }

// ConvertedBytes is the device memory of the weights converted to half or float side buffers.
func (b *Backend) ConvertedBytes() int64 { return b.weightBytes }

// TakeDecline returns and clears the *metal.Declined an allocation met since the last call, or nil.
func (b *Backend) TakeDecline() error {
	d := b.declined
	b.declined = nil
	return d
}

// Close releases every buffer, live ones included: the backend is unusable afterwards.
func (b *Backend) Close() {
	_ = b.Release()
	for st := range b.all {
		st.freed = true
		st.buf.Release()
	}
	b.all = map[*storage]bool{}
	b.live, b.held = 0, 0
	if b.amaxSlot != nil {
		b.amaxSlot.st.buf.Release()
		b.amaxSlot = nil
	}
}

// guard encodes the largest |x| into the amax slot, which the next convolution or linear layer
// reads to choose its power-of-two staging scale (kernels/vae.metal, "The guard"). Dispatches run
// in order, so one slot serves every op.
func (b *Backend) guard(x *tensor, class ml.Class) error {
	zero := kernels.EltParams{N: 1, BN: 1, Op: kernels.EltZero}
	g, t := kernels.ElementGrid(1)
	if err := dispatch(b, b.pipes.elt, class, &zero, g, t, func(enc device.Encoder) int {
		for i := range 3 {
			b.amaxSlot.bind(enc, i)
		}
		return 3
	}); err != nil {
		return err
	}
	n := uint32(x.n())
	g, t = kernels.FloatAmaxGrid(x.n())
	enc, err := b.encoder(class)
	if err != nil {
		return err
	}
	enc.SetPipeline(b.pipes.amax)
	x.bind(enc, 0)
	b.amaxSlot.bind(enc, 1)
	enc.SetBytes(device.StructBytes(&n), 2)
	enc.Dispatch(g, t)
	b.dispatched()
	return nil
}

// weight returns where the kernels read w as half [out, in·k·k]: its payload in the arena when
// it is f16 there, else a copy converted to half on first use (the fixed shortcut kernels, or a
// codec other than f16).
func (b *Backend) weight(w *quant.Tensor) (device.Buffer, int, error) {
	if w.DType == quant.F16 && b.arena != nil {
		if buf, off, ok := b.arena.Bind(w.Data); ok {
			return buf, off, nil
		}
	}
	key := uintptr(unsafe.Pointer(unsafe.SliceData(w.Data)))
	if hw, ok := b.halfWeights[key]; ok {
		return hw.buf, hw.off, nil
	}
	v, err := quant.Dequantize(w)
	if err != nil {
		return nil, 0, fmt.Errorf("metalops: decoding %s: %w", w.Name, err)
	}
	buf, err := b.dev.NewBuffer(2 * max(len(v), 2))
	if err != nil {
		return nil, 0, fmt.Errorf("metalops: a buffer for %s: %w", w.Name, err)
	}
	h := device.View[uint16](buf)
	for i, x := range v {
		h[i] = quant.Float32ToHalf(x)
	}
	b.halfWeights[key] = halfWeight{buf: buf}
	b.weightBytes += int64(buf.Len())
	return buf, 0, nil
}

// shortBufferDispatches is the command-buffer length after a watchdog stop.
const shortBufferDispatches = 8

// dispatchesPerBuffer is the command-buffer length on this device: cbDispatches, or
// shortBufferDispatches once the watchdog stopped a longer one (metal.Policies, per device).
func (b *Backend) dispatchesPerBuffer() int {
	if metal.Policies.Level(b.dev.Name(), metal.ProgramOps) > 0 {
		return shortBufferDispatches
	}
	return cbDispatches
}

// shorten makes later command buffers shortBufferDispatches long, for the device; false when they
// already are.
func (b *Backend) shorten() (string, bool) {
	if b.dispatchesPerBuffer() == shortBufferDispatches {
		return "", false
	}
	metal.Policies.Remember(b.dev.Name(), metal.ProgramOps, 1)
	return fmt.Sprintf("%d dispatches per command buffer", shortBufferDispatches), true
}
