package ml

import "easel/engine/quant"

// Tensor is a backend's handle to float32 data with a row-major shape. Only the backend that made
// a tensor may use it; ops given a foreign tensor return an error.
type Tensor interface {
	// Shape is the tensor's dimensions, outermost first; the last one is contiguous.
	Shape() []int
}

// Backend is the op set. Every op checks its arguments (shapes, nil tensors, foreign tensors) and
// returns an error that names the op and the mismatch instead of panicking; on error the
// destination is left unspecified. Ops may run asynchronously on a device: Download waits.
//
// Conventions: a [rows, cols] tensor may have any shape whose last dimension is cols. dst may alias
// an input only where an op says so. Row vectors ("one row") broadcast over every row.
type Backend interface {
	// Name identifies the backend in reports ("cpu/openblas", "metal", ...).
	Name() string
	// Timings is the per-class time this backend has spent in ops.
	Timings() *Timings

	// New allocates a zeroed tensor.
	New(shape ...int) (Tensor, error)
	// Upload copies host data (len = product of shape) into a new tensor.
	Upload(data []float32, shape ...int) (Tensor, error)
	// Download copies a tensor's elements to the host, after every queued op has finished.
	Download(t Tensor) ([]float32, error)
	// Slice is a view (no copy) of count = product(shape) consecutive elements starting at element
	// offset of t's storage: rows [r0, r0+n) of a [R, C] tensor are Slice(t, r0*C, n, C), and the
	// second of four D-wide chunks of a [1, 4D] row is Slice(t, D, D).
	Slice(t Tensor, offset int, shape ...int) (Tensor, error)
	// Free releases a tensor (and no view of it may be used afterwards). Freeing is optional on
	// the CPU backend, where the garbage collector reclaims tensors.
	Free(t Tensor)

	// Linear is dst[n, out] = x[n, in] · wᵀ for a weight w of shape [out, in] in any codec the
	// backend decodes (q4tp, q8_2f, q8_row, bf16, f16, f32). Class ClassGemm.
	Linear(dst, x Tensor, w *quant.Tensor) error
	// LinearBatch runs several weights over the same input (q/k/v, gate/up): dst[i] = x · w[i]ᵀ.
	LinearBatch(dst []Tensor, x Tensor, w []*quant.Tensor) error

	// GatedResidualModNorm is the DiT's row op: when y is not nil, x += tanh(gate) ⊙ y (x updated
	// in place); then, when dst is not nil, dst = LayerNorm(x)·(1 + scale) with a parameter-free
	// LayerNorm (biased variance, eps). gate and scale are one row of x's width. Class ClassNorm.
	GatedResidualModNorm(x, y, gate, dst, scale Tensor, eps float32) error
	// RMSNorm is dst = x / sqrt(mean(x²) + eps) · w per row; w is one row, or nil for no weight.
	// zeroCentred applies the weight as (w + 1) (Qwen-Image's txt_in.text_norm). dst may be x.
	RMSNorm(dst, x, w Tensor, eps float32, zeroCentred bool) error
	// LayerNorm is dst = (x − mean) / sqrt(var + eps) · w + b per row (biased variance); w and b
	// are one row each or nil. dst may be x.
	LayerNorm(dst, x, w, b Tensor, eps float32) error
	// HeadNormRoPE works in place on x [rows, heads·headDim]: each head's vector is RMS-normalized
	// with w (one row of headDim; skipped when w is nil), then rotated by rope (skipped when nil).
	// Class ClassRope.
	HeadNormRoPE(x Tensor, heads, headDim int, w Tensor, eps float32, rope *Rope) error
	// Attention is dst[n, heads·headDim] = softmax(q·Kᵀ·scale + visibility)·V per head, where K =
	// [prefixK; k] and V = [prefixV; v] (prefix may be nil). With KVHeads < Heads, query head h
	// uses key/value head h / (Heads/KVHeads). Class ClassAttn.
	Attention(dst, q, k, v, prefixK, prefixV Tensor, spec AttnSpec) error

	// SiLU is dst = x·sigmoid(x). dst may be x. Class ClassAct.
	SiLU(dst, x Tensor) error
	// GELUTanh is dst = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). dst may be x.
	GELUTanh(dst, x Tensor) error
	// GELUErf is the exact GELU, dst = 0.5·x·(1 + erf(x/√2)) (torch nn.GELU(); the vision tower's
	// mergers). dst may be x. Class ClassAct.
	GELUErf(dst, x Tensor) error
	// SwiGLU is dst = SiLU(gate) ⊙ up. dst may be gate or up.
	SwiGLU(dst, gate, up Tensor) error
	// Add is dst = a + b; b has a's shape or is one row (broadcast). dst may be a.
	Add(dst, a, b Tensor) error
	// Mul is dst = a ⊙ b; b has a's shape or is one row (broadcast). dst may be a.
	Mul(dst, a, b Tensor) error
	// Scale is dst = s·x. dst may be x.
	Scale(dst, x Tensor, s float32) error
	// Copy copies src into dst (same element count; use Slice for row ranges). Class ClassCopy.
	Copy(dst, src Tensor) error
	// Transpose is dst[c, r] = x[r, c] for a 2-D x [R, C] into dst [C, R]. Class ClassCopy.
	Transpose(dst, x Tensor) error

	// Conv2D is a 2-D convolution of x [inC, H, W] with w [outC, inC, kh, kw] (any codec) plus an
	// optional bias (one row of outC), into dst [outC, H', W']. Class ClassConv.
	Conv2D(dst, x Tensor, w *quant.Tensor, bias Tensor, spec ConvSpec) error
	// ChannelRMSNorm is dst[c, y, x] = x[c, y, x] / sqrt(mean over c of x[·, y, x]² + eps) · gamma[c]
	// for x and dst [C, H, W] and gamma one row of C values: the VAE's RMS norm over the channels
	// of a channel-first activation, without transposing it. dst may be x. Class ClassNorm.
	ChannelRMSNorm(dst, x, gamma Tensor, eps float32) error
	// UpsampleNearest is dst[c, y, x] = x[c, y/f, x/f] for x [C, H, W] and dst [C, f·H, f·W].
	UpsampleNearest(dst, x Tensor, factor int) error
}

// AttnSpec describes one attention call.
type AttnSpec struct {
	Heads, KVHeads, HeadDim int
	// Scale multiplies the scores (usually 1/√HeadDim).
	Scale float32
	// Visible, when not nil, holds for every query row i the number of keys it may see: keys
	// [0, Visible[i]) of [prefix; own] are visible, the rest masked. nil means every key is
	// visible. CausalVisibility and BlockCausalVisibility build it.
	Visible []int32
}

// ConvSpec is a convolution's stride and zero padding (top, bottom, left, right, in pixels).
type ConvSpec struct {
	Stride                               int
	PadTop, PadBottom, PadLeft, PadRight int
}

// SamePad is the symmetric padding p on every side (p = 1 for a 3×3 kernel) with stride 1.
func SamePad(p int) ConvSpec {
	return ConvSpec{Stride: 1, PadTop: p, PadBottom: p, PadLeft: p, PadRight: p}
}

// RopePairs says which elements of a head rotate together.
type RopePairs int

const (
	// Interleaved rotates (x[2p], x[2p+1]) by angle p (view_as_complex; the Qwen-Image DiT).
	Interleaved RopePairs = iota
	// HalfSplit rotates (x[p], x[p + headDim/2]) by angle p (rotate_half; Qwen3-VL).
	HalfSplit
)

// Rope is a rotary embedding: per row of the rotated tensor, headDim/2 angles as cos and sin
// tables [rows, headDim/2] (built on the host, e.g. by RopeTable, and uploaded).
type Rope struct {
	Cos, Sin Tensor
	Pairs    RopePairs
}
