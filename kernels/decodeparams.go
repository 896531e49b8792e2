package kernels

import "easel/kernels/device"

// DecParams mirrors decode.metal's DecParams: the one-row decode kernels' parameters.
type DecParams struct {
	Rows    uint32  `msl:"rows"`     // output rows, norm rows, heads, elements
	Cols    uint32  `msl:"cols"`     // input width, norm width, head dim
	DType   uint32  `msl:"dtype"`    // dec_gemv: the weight's codec (DecodeDType)
	Add     uint32  `msl:"add"`      // dec_gemv: 1 adds to y, 0 stores
	YOff    uint32  `msl:"y_off"`    // first output element
	XOff    uint32  `msl:"x_off"`    // first input element
	Keys    uint32  `msl:"keys"`     // dec_attn: cached rows attended to
	KVHeads uint32  `msl:"kv_heads"` // dec_attn: key/value heads
	Eps     float32 `msl:"eps"`      // norms
	Scale   float32 `msl:"scale"`    // dec_attn: 1/√headDim
	Stride  uint32  `msl:"stride"`   // dec_attn: the scores scratch's row
	Pad0    uint32  `msl:"pad0"`
}

// The weight codecs dec_gemv dequantizes (the .cmf dtype ids of engine/quant).
const (
	DecodeF32   = 0
	DecodeF16   = 1
	DecodeBF16  = 2
	DecodeQ8Row = 3
	DecodeQ82F  = 9
	DecodeQ4TP  = 15 // columns a multiple of 32
)

// DecodeKernels are decode.metal's kernels.
var DecodeKernels = []string{"dec_gemv", "dec_rmsnorm", "dec_headrope", "dec_attn", "dec_swiglu"}

// DecodeGrid is the dispatch of dec_gemv, dec_rmsnorm, dec_headrope and dec_attn over rows rows
// (or heads): one simdgroup per row, eight per 256-thread group.
func DecodeGrid(rows int) (groups, threads device.Size) { return size1(ceilDiv(rows, 8)), size1(256) }

// DecodeElementGrid is dec_swiglu's dispatch over n elements.
func DecodeElementGrid(n int) (groups, threads device.Size) {
	return size1(ceilDiv(n, 256)), size1(256)
}
