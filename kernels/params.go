package kernels

// Go mirrors of the parameter structs the kernels read from their last buffer (SetBytes with
// device.StructBytes). Field order, types and padding follow the MSL structs exactly; the msl tag
// names the MSL field, and TestEmuParamLayouts compares every offset with the compiled MSL struct.

// MmParams is struct MmParams of gemm.metal (qi_mm_q4tp, qi_mm_q8).
type MmParams struct {
	N          uint32    `msl:"n"`           // token rows of x and y
	Rows       uint32    `msl:"rows"`        // output features = rows of W
	K          uint32    `msl:"k"`           // reduction length
	Ldx        uint32    `msl:"ldx"`         // elements between rows of x
	Ldy        uint32    `msl:"ldy"`         // elements between rows of y
	Epi        uint32    `msl:"epi"`         // 0: float y, 1: half y
	Mul        float32   `msl:"mul"`         // scale of every output
	ParamsOff  uint32    `msl:"params_off"`  // q4tp: byte offset of the row params plane
	CodesOff   uint32    `msl:"codes_off"`   // q4tp: byte offset of the code plane
	CodeStride uint32    `msl:"code_stride"` // q4tp: bytes per row of the code plane
	Pad0       uint32    `msl:"pad0"`
	Pad1       uint32    `msl:"pad1"`
	XOff       [4]uint32 `msl:"x_off"` // per z slice: element offset of x
	YOff       [4]uint32 `msl:"y_off"` // per z slice: element offset of y
}

// FlashParams is struct FlashParams of flash.metal (qi_flash).
type FlashParams struct {
	QRow0  uint32  `msl:"q_row0"`  // panel row of query 0
	NQ     uint32  `msl:"nq"`      // queries
	NPre   uint32  `msl:"n_pre"`   // prefix keys in pkv
	NOwn   uint32  `msl:"n_own"`   // own keys (panel rows)
	Ldp    uint32  `msl:"ldp"`     // panel row stride
	H      uint32  `msl:"h"`       // model width
	Ldo    uint32  `msl:"ldo"`     // output row stride
	OScale float32 `msl:"oscale"`  // output scale
	UseVis uint32  `msl:"use_vis"` // 1: block-causal visibility
	Pad0   uint32  `msl:"pad0"`
	Pad1   uint32  `msl:"pad1"`
	Pad2   uint32  `msl:"pad2"`
}

// QkParams is struct QkParams of qkrope.metal (qi_qkrope).
type QkParams struct {
	H     uint32  `msl:"h"`     // model width
	NH    uint32  `msl:"nh"`    // heads
	Ldp   uint32  `msl:"ldp"`   // panel row stride
	Row0  uint32  `msl:"row0"`  // first panel row
	Rope0 uint32  `msl:"rope0"` // rope table row of row0
	Eps   float32 `msl:"eps"`   // RMSNorm epsilon
	QMul  float32 `msl:"qmul"`  // q scale after RoPE
	Pad0  uint32  `msl:"pad0"`
}

// RowParams is struct RowParams of rowop.metal (qi_rowop).
type RowParams struct {
	H      uint32  `msl:"h"`      // row length
	Row0   uint32  `msl:"row0"`   // first row
	Mode   uint32  `msl:"mode"`   // bit 0 gated residual, bit 1 modulated LayerNorm
	Eps    float32 `msl:"eps"`    // LayerNorm epsilon
	OScale float32 `msl:"oscale"` // scale of xn
	Pad0   uint32  `msl:"pad0"`
	Pad1   uint32  `msl:"pad1"`
	Pad2   uint32  `msl:"pad2"`
}

// SwigluParams is struct SwigluParams of swiglu.metal (qi_swiglu).
type SwigluParams struct {
	N4     uint32  `msl:"n4"`     // element count / 4
	GOff   uint32  `msl:"g_off"`  // first gate element
	UOff   uint32  `msl:"u_off"`  // first up element
	HOff   uint32  `msl:"h_off"`  // first output element
	OScale float32 `msl:"oscale"` // output scale
	Pad0   uint32  `msl:"pad0"`
	Pad1   uint32  `msl:"pad1"`
	Pad2   uint32  `msl:"pad2"`
}

// KvParams is struct KvParams of kvcopy.metal (qi_kvcopy).
type KvParams struct {
	H    uint32 `msl:"h"`    // model width
	Row0 uint32 `msl:"row0"` // first panel row
	N    uint32 `msl:"n"`    // rows to copy
	Ldp  uint32 `msl:"ldp"`  // panel row stride
}

// EmbedParams is struct EmbedParams of embed.metal (qi_embed).
type EmbedParams struct {
	H    uint32 `msl:"h"` // model width
	N    uint32 `msl:"n"` // tokens
	Pad0 uint32 `msl:"pad0"`
	Pad1 uint32 `msl:"pad1"`
}

// FinalParams is struct FinalParams of final.metal (qi_final).
type FinalParams struct {
	H    uint32  `msl:"h"`    // model width
	Row0 uint32  `msl:"row0"` // first x row
	Eps  float32 `msl:"eps"`  // LayerNorm epsilon
	Pad0 uint32  `msl:"pad0"`
}

// LoraParams is struct LoraParams of lora.metal (qi_lora_*).
type LoraParams struct {
	N       uint32  `msl:"n"`        // rows
	M       uint32  `msl:"m"`        // output columns (down: rank; up: the layer's outputs)
	K       uint32  `msl:"k"`        // reduction length (down: inputs; up: rank; lnscale: width)
	Ldx     uint32  `msl:"ldx"`      // elements between rows of x
	Ldy     uint32  `msl:"ldy"`      // elements between rows of y
	XOff    uint32  `msl:"x_off"`    // element offset of x (lnscale: first row)
	YOff    uint32  `msl:"y_off"`    // element offset of y
	HasBias uint32  `msl:"has_bias"` // up: 1 adds bias
	Mul     float32 `msl:"mul"`      // up: scale of the added term
	Eps     float32 `msl:"eps"`      // lnscale: LayerNorm epsilon
	BiasMul float32 `msl:"bias_mul"` // up: scale of the bias
	Pad1    uint32  `msl:"pad1"`
}
