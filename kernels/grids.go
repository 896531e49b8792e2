package kernels

import "easel/kernels/device"

// Dispatch shapes of the kernels, part of each kernel's contract: the threadgroup sizes are fixed
// by the kernel code (its tiling and its simdgroup roles), the grids follow from the problem.
// Each function returns the arguments of Encoder.Dispatch.

// size1 is a 1-D size.
func size1(n int) device.Size { return device.Size{Width: n, Height: 1, Depth: 1} }

// ceilDiv is ⌈a / b⌉.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// FragProbeGrid is qi_fragprobe's dispatch: one simdgroup.
func FragProbeGrid() (groups, threads device.Size) { return size1(1), size1(32) }

// MmGrid is qi_mm_q4tp's and qi_mm_q8's dispatch for n token rows, rows output features
// (a multiple of 64) and z batched weights (1..3).
func MmGrid(n, rows, z int) (groups, threads device.Size) {
	return device.Size{Width: ceilDiv(n, 64), Height: rows / 64, Depth: z}, size1(128)
}

// FlashGrid is qi_flash's dispatch for nq queries over heads heads.
func FlashGrid(nq, heads int) (groups, threads device.Size) {
	return device.Size{Width: ceilDiv(nq, 64), Height: heads, Depth: 1}, size1(256)
}

// QkRopeGrid is qi_qkrope's dispatch for rows panel rows of heads q heads (and as many k heads).
func QkRopeGrid(rows, heads int) (groups, threads device.Size) {
	return device.Size{Width: rows, Height: ceilDiv(2*heads, 4), Depth: 1}, size1(128)
}

// RowOpGrid is qi_rowop's dispatch for rows rows.
func RowOpGrid(rows int) (groups, threads device.Size) { return size1(rows), size1(256) }

// SwigluGrid is qi_swiglu's dispatch for n4 groups of four elements.
func SwigluGrid(n4 int) (groups, threads device.Size) { return size1(ceilDiv(n4, 256)), size1(256) }

// KvCopyGrid is qi_kvcopy's dispatch for model width h and n rows.
func KvCopyGrid(h, n int) (groups, threads device.Size) {
	return device.Size{Width: ceilDiv(2*h/8, 64), Height: ceilDiv(n, 4), Depth: 1}, device.Size{Width: 64, Height: 4, Depth: 1}
}

// EmbedGrid is qi_embed's dispatch for model width h and n tokens.
func EmbedGrid(h, n int) (groups, threads device.Size) {
	return device.Size{Width: ceilDiv(h, 256), Height: n, Depth: 1}, size1(256)
}

// FinalGrid is qi_final's dispatch for rows rows.
func FinalGrid(rows int) (groups, threads device.Size) { return size1(rows), size1(256) }

// AmaxGrid is qi_amax's dispatch (any number of groups works; 256 keeps a GPU busy).
func AmaxGrid() (groups, threads device.Size) { return size1(256), size1(256) }

// LoraGrid is qi_lora_down_*'s and qi_lora_up*'s dispatch for n rows of m output columns.
func LoraGrid(n, m int) (groups, threads device.Size) {
	return device.Size{Width: ceilDiv(m, 64), Height: n, Depth: 1}, size1(64)
}

// LoraLNScaleGrid is qi_lora_lnscale's dispatch for n rows.
func LoraLNScaleGrid(n int) (groups, threads device.Size) { return size1(ceilDiv(n, 64)), size1(64) }
