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
	Pad0    uint32 `msl:"pad0"`
}

// MatParams is struct MatParams of vae.metal (vae_mm).
type MatParams struct {
	M      uint32  `msl:"m"`       // rows of A and C
	N      uint32  `msl:"n"`       // columns of C
	K      uint32  `msl:"k"`       // reduction length
	Lda    uint32  `msl:"lda"`     // elements between rows of A
	Ldb    uint32  `msl:"ldb"`     // elements between rows of B
	Ldc    uint32  `msl:"ldc"`     // elements between rows of C
	TransB uint32  `msl:"trans_b"` // 0: B is [k, n]; 1: B is [n, k]
	Alpha  float32 `msl:"alpha"`   // scale of every output
}

// SoftmaxParams is struct SoftmaxParams of vae.metal (vae_softmax).
type SoftmaxParams struct {
	N    uint32 `msl:"n"`  // row length
	Ld   uint32 `msl:"ld"` // elements between rows
	Pad0 uint32 `msl:"pad0"`
	Pad1 uint32 `msl:"pad1"`
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

// TransposeParams is struct TransposeParams of vae.metal (vae_transpose).
type TransposeParams struct {
	Rows uint32 `msl:"rows"`
	Cols uint32 `msl:"cols"`
	Pad0 uint32 `msl:"pad0"`
	Pad1 uint32 `msl:"pad1"`
}
