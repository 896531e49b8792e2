package quant

import "fmt"

// DType is a CMF dtype id. The ids are fixed by the format and never reused.
type DType uint8

// The dtype ids of CMF v2 (cmf.md §5). Easel encodes and decodes F32, F16, BF16, Q8Row, Q8_2F,
// Q4TP; U8 holds opaque bytes (JSON config blobs). The others are recognised so that a file
// holding them can be described, but they cannot be decoded.
const (
	F32      DType = 0
	F16      DType = 1
	BF16     DType = 2
	Q8Row    DType = 3
	Q4Block  DType = 4
	Mix8_4   DType = 5
	U8       DType = 6
	Q4Col    DType = 7
	VBit     DType = 8
	Q8_2F    DType = 9
	VBitRO   DType = 10
	Q4Tiled  DType = 11
	Q1       DType = 12
	Q1S      DType = 13
	Q1T      DType = 14
	Q4TP     DType = 15
	Q2TP     DType = 16
	maxDType       = Q2TP
)

// GroupSize is the number of weights that share one scale in the grouped codecs.
const GroupSize = 32

var names = [...]string{"f32", "f16", "bf16", "q8_row", "q4_block", "mix8_4", "u8", "q4_col", "vbit",
	"q8_2f", "vbit_ro", "q4_tiled", "q1", "q1s", "q1t", "q4tp", "q2tp"}

// String is the dtype's name as cortiq prints it.
func (d DType) String() string {
	if d <= maxDType {
		return names[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Known reports whether d is one of the ids the format defines (0–16).
func (d DType) Known() bool { return d <= maxDType }

// ParseDType maps a name (as printed by String) back to its id.
func ParseDType(s string) (DType, bool) {
	for i, n := range names {
		if n == s {
			return DType(i), true
		}
	}
	return 0, false
}

// PayloadSize is the exact byte length a tensor of this dtype and shape occupies, as cortiq's
// expected_nbytes computes it. ok is false when the size is not determined by dtype and shape
// (u8, vbit, reserved ids) or the shape does not suit the codec (q4tp needs 2-D with cols % 32 == 0).
func PayloadSize(d DType, shape []int) (size int64, ok bool) {
	n := int64(1)
	for _, s := range shape {
		if s < 0 || (s > 0 && n > (1<<50)/int64(s)) {
			return 0, false
		}
		n *= int64(s)
	}
	ceil32 := (n + 31) / 32
	switch d {
	case F32:
		return 4 * n, true
	case F16, BF16:
		return 2 * n, true
	case Q4Block, Q4Tiled:
		return 18 * ceil32, true
	case Q1:
		return 6 * ceil32, true
	}
	if len(shape) != 2 {
		return 0, false
	}
	rows, cols := int64(shape[0]), int64(shape[1])
	switch d {
	case Q8Row:
		return n + 2*rows, true
	case Q8_2F:
		if rows == 0 {
			return 0, false
		}
		return n + 2*rows + 2*(n/rows), true
	case Q4TP, Q2TP:
		if cols%GroupSize != 0 {
			return 0, false
		}
		gpr := cols / GroupSize
		plane := int64(16)
		if d == Q2TP {
			plane = 8
		}
		return rows*gpr*plane + 4*rows + rows*((gpr*5+7)/8), true
	}
	return 0, false
}
