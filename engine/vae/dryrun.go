package vae

import (
	"fmt"

	"easel/engine/ml"
	"easel/engine/quant"
)

// dryBackend runs a network without arithmetic: tensors have shapes but no data, and the backend
// records the peak of live tensor bytes, the convolutions' and the attention's floating-point
// work, and the bytes each op touches once (weights at 2 bytes, as the f16 file holds them;
// activations at 4). It lets Plan measure the published geometry (1152-wide stages) exactly,
// without its weights and in milliseconds. Ops the VAE never calls return an error.
type dryBackend struct {
	live, peak int64
	convFlops  float64
	attnFlops  float64
	convBytes  float64 // convolutions: f16 weights, input and output
	otherBytes float64 // everything else: norms, activations, additions, copies, attention
	timings    ml.Timings
}

// touch counts the float32 bytes of tensors an op reads or writes once.
func (b *dryBackend) touch(ts ...ml.Tensor) error {
	for _, t := range ts {
		if t != nil {
			b.otherBytes += 4 * float64(elements(t.Shape()))
		}
	}
	return nil
}

var _ ml.Backend = (*dryBackend)(nil)

type dryTensor struct {
	shape []int
	bytes int64 // 0 for views and freed tensors
}

func (t *dryTensor) Shape() []int { return t.shape }

func elements(shape []int) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	return n
}

func (b *dryBackend) Name() string         { return "dry-run" }
func (b *dryBackend) Timings() *ml.Timings { return &b.timings }

func (b *dryBackend) New(shape ...int) (ml.Tensor, error) {
	t := &dryTensor{shape: append([]int(nil), shape...), bytes: 4 * elements(shape)}
	b.live += t.bytes
	b.peak = max(b.peak, b.live)
	return t, nil
}

func (b *dryBackend) Upload(data []float32, shape ...int) (ml.Tensor, error) {
	if int64(len(data)) != elements(shape) {
		return nil, fmt.Errorf("dry run: upload of %d values as %v", len(data), shape)
	}
	return b.New(shape...)
}

func (b *dryBackend) Download(t ml.Tensor) ([]float32, error) {
	if t == nil {
		return nil, fmt.Errorf("dry run: download of a missing tensor")
	}
	return make([]float32, elements(t.Shape())), nil
}

func (b *dryBackend) Slice(t ml.Tensor, offset int, shape ...int) (ml.Tensor, error) {
	if t == nil {
		return nil, fmt.Errorf("dry run: slice of a missing tensor")
	}
	if offset < 0 || int64(offset)+elements(shape) > elements(t.Shape()) {
		return nil, fmt.Errorf("dry run: slice of %v elements at %d from a tensor %v", shape, offset, t.Shape())
	}
	return &dryTensor{shape: append([]int(nil), shape...)}, nil
}

func (b *dryBackend) Free(t ml.Tensor) {
	if dt, ok := t.(*dryTensor); ok {
		b.live -= dt.bytes
		dt.bytes = 0
	}
}

func (b *dryBackend) Conv2D(dst, x ml.Tensor, w *quant.Tensor, bias ml.Tensor, spec ml.ConvSpec) error {
	if dst == nil || x == nil || w == nil {
		return fmt.Errorf("dry run: conv of a missing tensor")
	}
	if len(w.Shape) != 4 || x.Shape()[0] != w.Shape[1] || dst.Shape()[0] != w.Shape[0] {
		return fmt.Errorf("dry run: conv %q %v from %v into %v", w.Name, w.Shape, x.Shape(), dst.Shape())
	}
	b.convFlops += 2 * float64(elements(w.Shape)) * float64(dst.Shape()[1]*dst.Shape()[2])
	b.convBytes += 2*float64(elements(w.Shape)) + 4*float64(elements(x.Shape())+elements(dst.Shape()))
	return nil
}

func (b *dryBackend) UpsampleNearest(dst, x ml.Tensor, factor int) error { return b.touch(dst, x) }
func (b *dryBackend) RMSNorm(dst, x, w ml.Tensor, eps float32, zeroCentred bool) error {
	return b.touch(dst, x)
}
func (b *dryBackend) Transpose(dst, x ml.Tensor) error        { return b.touch(dst, x) }
func (b *dryBackend) SiLU(dst, x ml.Tensor) error             { return b.touch(dst, x) }
func (b *dryBackend) Add(dst, a, c ml.Tensor) error           { return b.touch(dst, a, c) }
func (b *dryBackend) Mul(dst, a, c ml.Tensor) error           { return b.touch(dst, a, c) }
func (b *dryBackend) Copy(dst, src ml.Tensor) error           { return b.touch(dst, src) }
func (b *dryBackend) Scale(dst, x ml.Tensor, s float32) error { return b.touch(dst, x) }

// Attention counts QKᵀ and PV over every key (the mid block's single head sees every pixel).
func (b *dryBackend) Attention(dst, q, k, v, prefixK, prefixV ml.Tensor, spec ml.AttnSpec) error {
	if q == nil || k == nil {
		return fmt.Errorf("dry run: attention over a missing tensor")
	}
	n, m := elements(q.Shape())/int64(spec.Heads*spec.HeadDim), elements(k.Shape())/int64(spec.KVHeads*spec.HeadDim)
	b.attnFlops += 4 * float64(n) * float64(m) * float64(spec.Heads*spec.HeadDim)
	return b.touch(dst, q, k, v)
}

var errDryOp = fmt.Errorf("dry run: the VAE does not use this op")

func (b *dryBackend) Linear(dst, x ml.Tensor, w *quant.Tensor) error { return errDryOp }
func (b *dryBackend) LinearBatch(dst []ml.Tensor, x ml.Tensor, w []*quant.Tensor) error {
	return errDryOp
}
func (b *dryBackend) GatedResidualModNorm(x, y, gate, dst, scale ml.Tensor, eps float32) error {
	return errDryOp
}
func (b *dryBackend) LayerNorm(dst, x, w, bias ml.Tensor, eps float32) error { return errDryOp }
func (b *dryBackend) HeadNormRoPE(x ml.Tensor, heads, headDim int, w ml.Tensor, eps float32, rope *ml.Rope) error {
	return errDryOp
}
func (b *dryBackend) GELUTanh(dst, x ml.Tensor) error      { return errDryOp }
func (b *dryBackend) GELUErf(dst, x ml.Tensor) error       { return errDryOp }
func (b *dryBackend) SwiGLU(dst, gate, up ml.Tensor) error { return errDryOp }

// ChannelRMSNorm normalises in place of a transpose: no scratch.
func (b *dryBackend) ChannelRMSNorm(dst, x, gamma ml.Tensor, eps float32) error {
	return b.touch(dst, x)
}
