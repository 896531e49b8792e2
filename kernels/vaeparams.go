package kernels

// Go mirrors of vae.metal's parameter structs (checked by TestEmuParamLayouts like params.go's).

// ConvParams is struct ConvParams of vae.metal (vae_conv).
type ConvParams struct {
	IC      uint32 `msl:"ic"`       // input channels
	H       uint32 `msl:"h"`        // input height
	W       uint32 `msl:"w"`        // input width
	OC      uint32 `msl:"oc"`       // output channels
	OH      uint32 `msl:"oh"`       // output height
	OW      uint32 `msl:"ow"`       // output width
	K       uint32 `msl:"k"`        // kernel side
	Stride  uint32 `msl:"stride"`   // 1 or 2
	PadTop  uint32 `msl:"pad_top"`  // zero rows above
	PadLeft uint32 `msl:"pad_left"` // zero columns to the left
	HasBias uint32 `msl:"has_bias"` // 1: add bias[o]
	Guard   uint32 `msl:"guard"`    // 1: stage x under the power-of-two guard of its amax
}

// NormParams is struct NormParams of vae.metal (vae_chnorm).
type NormParams struct {
	C      uint32  `msl:"c"`      // channels
	Pixels uint32  `msl:"pixels"` // H·W
	Eps    float32 `msl:"eps"`
	Pad0   uint32  `msl:"pad0"`
}

// The operations of vae_elt (EltParams.Op).
const (
	EltSiLU uint32 = iota
	EltAdd
	EltMul
	EltScale
	EltCopy
	EltZero
	EltGELUTanh
	EltSwiGLU
	EltLeakyReLU // slope S
	EltPReLU     // slope b[i / BN]: one per plane of BN elements
)

// EltParams is struct EltParams of vae.metal (vae_elt).
type EltParams struct {
	N  uint32  `msl:"n"`  // elements of a and y
	BN uint32  `msl:"bn"` // elements of b (n, or one repeating row)
	Op uint32  `msl:"op"` // EltSiLU … EltZero
	S  float32 `msl:"s"`  // scale of EltScale
}

// UpParams is struct UpParams of vae.metal (vae_upsample).
type UpParams struct {
	C uint32 `msl:"c"` // channels
	H uint32 `msl:"h"` // input height
	W uint32 `msl:"w"` // input width
	F uint32 `msl:"f"` // factor
}

// ShuffleParams is struct ShuffleParams of vae.metal (vae_shuffle).
type ShuffleParams struct {
	C         uint32 `msl:"c"`         // channels of the large layout
	H         uint32 `msl:"h"`         // height of the small layout
	W         uint32 `msl:"w"`         // width of the small layout
	R         uint32 `msl:"r"`         // factor
	Unshuffle uint32 `msl:"unshuffle"` // 0: pixel_shuffle, 1: pixel_unshuffle
	Pad0      uint32 `msl:"pad0"`
	Pad1      uint32 `msl:"pad1"`
	Pad2      uint32 `msl:"pad2"`
}

// TransposeParams is struct TransposeParams of vae.metal (vae_transpose).
type TransposeParams struct {
	Rows uint32 `msl:"rows"`
	Cols uint32 `msl:"cols"`
	Pad0 uint32 `msl:"pad0"`
	Pad1 uint32 `msl:"pad1"`
}

// Go mirrors of ops.metal's parameter structs.

// LinearParams is struct LinearParams of ops.metal (ops_linear).
type LinearParams struct {
	N     uint32 `msl:"n"`     // token rows of x and y
	Out   uint32 `msl:"out"`   // output features
	In    uint32 `msl:"in"`    // reduction length
	Ldx   uint32 `msl:"ldx"`   // elements between rows of x
	Ldy   uint32 `msl:"ldy"`   // elements between rows of y
	Q8    uint32 `msl:"q8"`    // 0: W half; 1: int8 codes with col and rs
	Guard uint32 `msl:"guard"` // 1: stage x under the power-of-two guard of its amax
	Pad1  uint32 `msl:"pad1"`
}

// BatchParams is struct BatchParams of ops.metal (ops_mm).
type BatchParams struct {
	M      uint32  `msl:"m"`       // rows of A and C
	N      uint32  `msl:"n"`       // columns of C
	K      uint32  `msl:"k"`       // reduction length
	Lda    uint32  `msl:"lda"`     // elements between rows of A
	Ldb    uint32  `msl:"ldb"`     // elements between rows of B
	Ldc    uint32  `msl:"ldc"`     // elements between rows of C
	TransB uint32  `msl:"trans_b"` // 0: B is [k, n]; 1: B is [n, k]
	Alpha  float32 `msl:"alpha"`   // scale of every output
	AZ     uint32  `msl:"a_z"`     // elements between slices of A
	BZ     uint32  `msl:"b_z"`     // elements between slices of B
	CZ     uint32  `msl:"c_z"`     // elements between slices of C
	Group  uint32  `msl:"group"`   // slices of A per slice of B
}

// SoftParams is struct SoftParams of ops.metal (ops_softmax).
type SoftParams struct {
	N      uint32 `msl:"n"`       // keys
	Ld     uint32 `msl:"ld"`      // elements between rows
	M      uint32 `msl:"m"`       // rows per slice
	Row0   uint32 `msl:"row0"`    // query index of row 0
	UseVis uint32 `msl:"use_vis"` // 1: mask keys past vis[row0 + i]
	Valid  uint32 `msl:"valid"`   // rows of each slice to process
	Pad1   uint32 `msl:"pad1"`
	Pad2   uint32 `msl:"pad2"`
}

// RowNormParams is struct RowNormParams of ops.metal (ops_rownorm).
type RowNormParams struct {
	Cols        uint32  `msl:"cols"`         // row length
	Mode        uint32  `msl:"mode"`         // 0 RMS norm, 1 LayerNorm
	HasW        uint32  `msl:"has_w"`        // 1: weight
	HasB        uint32  `msl:"has_b"`        // 1: bias (LayerNorm)
	ZeroCentred uint32  `msl:"zero_centred"` // 1: RMS weight is w + 1
	Eps         float32 `msl:"eps"`
	Pad0        uint32  `msl:"pad0"`
	Pad1        uint32  `msl:"pad1"`
}

// HeadParams is struct HeadParams of ops.metal (ops_headrope).
type HeadParams struct {
	Rows    uint32  `msl:"rows"`     // rows of x
	Heads   uint32  `msl:"heads"`    // heads per row
	HD      uint32  `msl:"hd"`       // head dimension
	HasW    uint32  `msl:"has_w"`    // 1: RMS-normalize each head
	HasRope uint32  `msl:"has_rope"` // 1: rotate
	Split   uint32  `msl:"split"`    // 0 interleaved pairs, 1 halves
	Eps     float32 `msl:"eps"`
	Pad0    uint32  `msl:"pad0"`
}
