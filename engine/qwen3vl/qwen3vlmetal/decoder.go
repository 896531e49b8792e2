package qwen3vlmetal

import (
	"context"
	"fmt"
	"math"

	"easel/engine/ml/metal"
	"easel/engine/quant"
	"easel/engine/qwen3vl"
	"easel/kernels"
	"easel/kernels/device"
)

// rowDecoder is qwen3vl.RowDecoder on a device with kernels/decode.metal: every activation,
// the key/value cache and every accumulation in float, each weight dequantized inside the GEMV
// from its stored codec and read once per token. It copies the weights into buffers of its own
// (their stored bytes) and keeps them until Close.
type rowDecoder struct {
	dev   device.Device
	c     qwen3vl.TextConfig
	pipes map[string]device.Pipeline
	bufs  []device.Buffer // everything to release

	layers []decLayer
	norm   device.Buffer
	head   decMatrix

	x, h, q, attn, gate, up, logits, cs, scores device.Buffer
	k, v                                        []device.Buffer
	n, capacity                                 int
}

type decMatrix struct {
	buf        device.Buffer
	dtype      uint32
	rows, cols int
}

type decLayer struct {
	inNorm, postNorm, qNorm, kNorm device.Buffer
	q, k, v, o, gate, up, down     decMatrix
}

// decodeCodec is the codec id dec_gemv reads, or false for a codec it does not.
func decodeCodec(d quant.DType) (uint32, bool) {
	switch d {
	case quant.F32:
		return kernels.DecodeF32, true
	case quant.F16:
		return kernels.DecodeF16, true
	case quant.BF16:
		return kernels.DecodeBF16, true
	case quant.Q8Row:
		return kernels.DecodeQ8Row, true
	case quant.Q8_2F:
		return kernels.DecodeQ82F, true
	case quant.Q4TP:
		return kernels.DecodeQ4TP, true
	}
	return 0, false
}

// RowDecodeBytes is the device memory of a rowDecoder for w and capacity cached rows: the
// weights as stored, the norms, the cache, the scratch rows and the attention scores.
func RowDecodeBytes(w *qwen3vl.RowWeights, capacity int) int64 {
	n := int64(len(w.Head.Data)) + 4*int64(len(w.Norm))
	for _, l := range w.Layers {
		for _, m := range []*quant.Tensor{l.Q, l.K, l.V, l.O, l.Gate, l.Up, l.Down} {
			n += int64(len(m.Data))
		}
		n += 4 * int64(len(l.InputNorm)+len(l.PostNorm)+len(l.QNorm)+len(l.KNorm))
	}
	return n + PlanGenerateFor(w.Config, nil, capacity, 0, nil)
}

// newRowDecoder places w on dev for capacity cached rows; resident is what the device already
// holds. A *metal.Declined error says the device cannot: a codec the kernels do not read, or
// too little memory.
func newRowDecoder(dev device.Device, w *qwen3vl.RowWeights, capacity int, resident int64) (d *rowDecoder, err error) {
	c := w.Config
	lim := dev.Limits()
	need := RowDecodeBytes(w, capacity)
	if lim.RecommendedMaxWorkingSetSize > 0 && resident+need > lim.RecommendedMaxWorkingSetSize {
		return nil, metal.Decline("writing text needs %s on %s for the weights as stored, the key/value cache and the rows, beyond the %s it holds; its recommended working set is %s",
			metal.FormatBytes(need), dev.Name(), metal.FormatBytes(resident), metal.FormatBytes(lim.RecommendedMaxWorkingSetSize))
	}
	if c.Heads%c.KVHeads != 0 || c.HeadDim%2 != 0 {
		return nil, metal.Decline("the one-row decode kernels need query heads a multiple of key/value heads and an even head dim (have %d, %d, %d)", c.Heads, c.KVHeads, c.HeadDim)
	}
	d = &rowDecoder{dev: dev, c: c, pipes: map[string]device.Pipeline{}, capacity: capacity}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	src, err := kernels.Source("decode.metal")
	if err != nil {
		return nil, err
	}
	lib, err := dev.NewLibrary("decode.metal", src)
	if err != nil {
		return nil, fmt.Errorf("compiling decode.metal: %w", err)
	}
	for _, fn := range kernels.DecodeKernels {
		p, err := dev.Pipeline(lib, fn)
		if err != nil {
			return nil, err
		}
		if err := kernels.FitsBaseline(fn, p); err != nil {
			return nil, metal.Decline("%v", err)
		}
		d.pipes[fn] = p
	}
	newBuf := func(n int) device.Buffer {
		if err != nil {
			return nil
		}
		if lim.MaxBufferLength > 0 && int64(n) > lim.MaxBufferLength {
			err = metal.Decline("writing text needs a buffer of %s; %s's largest is %s", metal.FormatBytes(int64(n)), dev.Name(), metal.FormatBytes(lim.MaxBufferLength))
			return nil
		}
		var b device.Buffer
		if b, err = dev.NewBuffer(max(n, 4)); err == nil {
			d.bufs = append(d.bufs, b)
		}
		return b
	}
	floats := func(v []float32) device.Buffer {
		b := newBuf(4 * len(v))
		if b != nil {
			copy(device.View[float32](b), v)
		}
		return b
	}
	matrix := func(t *quant.Tensor) decMatrix {
		code, ok := decodeCodec(t.DType)
		if ok && t.DType == quant.Q4TP && t.Cols()%32 != 0 {
			ok = false
		}
		if !ok {
			if err == nil {
				err = metal.Decline("the one-row decode kernels do not read %v weights (%s): the CPU writes the text", t.DType, t.Name)
			}
			return decMatrix{}
		}
		b := newBuf(len(t.Data))
		if b != nil {
			copy(b.Bytes(), t.Data)
		}
		return decMatrix{buf: b, dtype: code, rows: t.Rows(), cols: t.Cols()}
	}
	for _, l := range w.Layers {
		d.layers = append(d.layers, decLayer{
			inNorm: floats(l.InputNorm), postNorm: floats(l.PostNorm), qNorm: floats(l.QNorm), kNorm: floats(l.KNorm),
			q: matrix(l.Q), k: matrix(l.K), v: matrix(l.V), o: matrix(l.O), gate: matrix(l.Gate), up: matrix(l.Up), down: matrix(l.Down),
		})
	}
	d.norm, d.head = floats(w.Norm), matrix(w.Head)
	qw, kvw := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	d.x, d.h, d.q, d.attn = newBuf(4*c.Hidden), newBuf(4*c.Hidden), newBuf(4*qw), newBuf(4*qw)
	d.gate, d.up, d.logits = newBuf(4*c.Intermediate), newBuf(4*c.Intermediate), newBuf(4*c.Vocab)
	d.cs, d.scores = newBuf(4*c.HeadDim), newBuf(4*c.Heads*capacity)
	for range c.Layers {
		d.k, d.v = append(d.k, newBuf(4*capacity*kvw)), append(d.v, newBuf(4*capacity*kvw))
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Close releases the decoder's buffers.
func (d *rowDecoder) Close() {
	for _, b := range d.bufs {
		b.Release()
	}
	d.bufs = nil
}

// Reset empties the cache; capacity may not grow past the one the decoder was made for.
func (d *rowDecoder) Reset(capacity int) error {
	if capacity > d.capacity {
		return fmt.Errorf("the device decoder holds %d cached rows; %d asked", d.capacity, capacity)
	}
	d.n = 0
	return nil
}

// pass is one command buffer's compute encoder.
type pass struct {
	d   *rowDecoder
	cb  device.CommandBuffer
	enc device.Encoder
}

func (d *rowDecoder) begin() (*pass, error) {
	cb, err := d.dev.NewCommandBuffer()
	if err != nil {
		return nil, err
	}
	return &pass{d: d, cb: cb, enc: cb.ComputeEncoder()}, nil
}

// finish commits and waits; a GPU error becomes a *metal.Declined with its sentence, so the CPU
// writes the text instead (a page fault, the model file's, and other errors pass as they are).
func (p *pass) finish() error {
	p.enc.End()
	p.cb.Commit()
	err := p.cb.Wait()
	if advice := metal.GPUErrorAdvice("text encoder's writing", err); advice != "" {
		return metal.Decline("%s", advice)
	}
	return err
}

// dispatch runs fn over rows with bufs bound at 0.. and prm after them.
func (p *pass) dispatch(fn string, rows int, prm kernels.DecParams, bufs ...device.Buffer) {
	p.enc.SetPipeline(p.d.pipes[fn])
	for i, b := range bufs {
		p.enc.SetBuffer(b, 0, i)
	}
	p.enc.SetBytes(device.StructBytes(&prm), len(bufs))
	groups, threads := kernels.DecodeGrid(rows)
	if fn == "dec_swiglu" {
		groups, threads = kernels.DecodeElementGrid(rows)
	}
	p.enc.Dispatch(groups, threads)
}

func (p *pass) gemv(m decMatrix, x, y device.Buffer, yOff int, add bool) {
	prm := kernels.DecParams{Rows: uint32(m.rows), Cols: uint32(m.cols), DType: m.dtype, YOff: uint32(yOff)}
	if add {
		prm.Add = 1
	}
	p.dispatch("dec_gemv", m.rows, prm, m.buf, x, y)
}

func (p *pass) rmsnorm(x, w, y device.Buffer) {
	D := p.d.c.Hidden
	p.dispatch("dec_rmsnorm", 1, kernels.DecParams{Rows: 1, Cols: uint32(D), Eps: p.d.c.RMSNormEps}, x, w, y)
}

// layer encodes decoder layer l over the row in x at cache row n.
func (p *pass) layer(l, n int) {
	d, c := p.d, p.d.c
	w := &d.layers[l]
	kvw := c.KVHeads * c.HeadDim
	p.rmsnorm(d.x, w.inNorm, d.h)
	p.gemv(w.q, d.h, d.q, 0, false)
	p.gemv(w.k, d.h, d.k[l], n*kvw, false)
	p.gemv(w.v, d.h, d.v[l], n*kvw, false)
	head := kernels.DecParams{Rows: uint32(c.Heads), Cols: uint32(c.HeadDim), Eps: c.RMSNormEps}
	p.dispatch("dec_headrope", c.Heads, head, d.q, w.qNorm, d.cs)
	head.Rows, head.YOff = uint32(c.KVHeads), uint32(n*kvw)
	p.dispatch("dec_headrope", c.KVHeads, head, d.k[l], w.kNorm, d.cs)
	attn := kernels.DecParams{Rows: uint32(c.Heads), Cols: uint32(c.HeadDim), Keys: uint32(n + 1), KVHeads: uint32(c.KVHeads),
		Scale: float32(1 / math.Sqrt(float64(c.HeadDim))), Stride: uint32(d.capacity)}
	p.dispatch("dec_attn", c.Heads, attn, d.q, d.k[l], d.v[l], d.attn, d.scores)
	p.gemv(w.o, d.attn, d.x, 0, true)
	p.rmsnorm(d.x, w.postNorm, d.h)
	p.gemv(w.gate, d.h, d.gate, 0, false)
	p.gemv(w.up, d.h, d.up, 0, false)
	p.dispatch("dec_swiglu", c.Intermediate, kernels.DecParams{Rows: uint32(c.Intermediate)}, d.gate, d.up)
	p.gemv(w.down, d.gate, d.x, 0, true)
}

// Row runs one row through the layers: one command buffer for the row, split after a layer
// whose DeepStack features the host adds.
func (d *rowDecoder) Row(ctx context.Context, in qwen3vl.RowInput, logits bool) ([]float32, error) {
	c := d.c
	if d.n >= d.capacity {
		return nil, fmt.Errorf("the device decoder's cache of %d rows is full", d.capacity)
	}
	if len(in.X) != c.Hidden || len(in.Cos) != c.HeadDim/2 || len(in.Sin) != c.HeadDim/2 {
		return nil, fmt.Errorf("a row of %d values with rotary tables of %d and %d; the model needs %d and %d", len(in.X), len(in.Cos), len(in.Sin), c.Hidden, c.HeadDim/2)
	}
	copy(device.View[float32](d.x), in.X)
	cs := device.View[float32](d.cs)
	copy(cs, in.Cos)
	copy(cs[c.HeadDim/2:], in.Sin)
	p, err := d.begin()
	if err != nil {
		return nil, err
	}
	for l := range d.layers {
		if err := ctx.Err(); err != nil {
			p.finish()
			return nil, err
		}
		p.layer(l, d.n)
		if l < len(in.Inject) && in.Inject[l] != nil {
			if err := p.finish(); err != nil {
				return nil, err
			}
			x := device.View[float32](d.x)
			for i, v := range in.Inject[l] {
				x[i] += v
			}
			if p, err = d.begin(); err != nil {
				return nil, err
			}
		}
	}
	if logits {
		p.rmsnorm(d.x, d.norm, d.h)
		p.gemv(d.head, d.h, d.logits, 0, false)
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	d.n++
	if !logits {
		return nil, nil
	}
	return append([]float32(nil), device.View[float32](d.logits)...), nil
}
