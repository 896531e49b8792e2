package kernels

import (
	"fmt"

	"easel/kernels/device"
)

// The kernel variants a Metal program may choose between (docs/METAL.md §7): each is a set of
// kernel functions with the baseline's buffers, parameters and results, differing in how they get
// there. A variant states what it needs (threads, threadgroup memory, the alignment of its
// operands, the smallest problem it is meant for) so a host can skip it with a note instead of
// dispatching something that does not fit.

// GemmVariant is one way to run the denoiser's quantized GEMM (MmParams, gemm.metal's buffers).
type GemmVariant struct {
	// Name is what EASEL_METAL_VARIANT_GEMM and the diagnostics call it.
	Name string
	// File is the library that defines the functions.
	File string
	// Q4TP and Q8 are the functions for the two codecs; with Spec set they are prefixes that
	// take "_f" (float output) or "_h" (half output).
	Q4TP, Q8 string
	Spec     bool
	// TileM is the token rows per threadgroup (the output features per threadgroup are 64).
	TileM int
	// Threads per threadgroup, and the threadgroup memory the functions declare, in bytes.
	Threads, ThreadgroupBytes int
	// XAlign is the element multiple ldx and every x offset must be (16-byte x loads), 1 for
	// none; YAlign the same for ldy and the y offsets (vector stores).
	XAlign, YAlign int
	// MinN is the smallest token count the variant is meant for (0: any); below it the host
	// uses the baseline. It is a policy, not a correctness limit.
	MinN int
	// TensorOps marks a variant whose library needs Metal 4's tensor API (Apple10-family GPU and
	// macOS 26): the host compiles it only where the device has the API.
	TensorOps bool
	// About is one line for the diagnostics and the docs.
	About string
}

// tileBytes is the threadgroup memory of a tileM-token tile: x and W staged as half in rows of
// TILE_LD = 40 halves (gemmtile.h).
func tileBytes(tileM int) int { return (tileM + 64) * 40 * 2 }

// GemmVariants lists the baseline first, then the variants of gemmvar.metal.
var GemmVariants = []GemmVariant{
	{Name: "base", File: "gemm.metal", Q4TP: "qi_mm_q4tp", Q8: "qi_mm_q8", TileM: 64, Threads: 128,
		ThreadgroupBytes: tileBytes(64), XAlign: 1, YAlign: 1, About: "the seed's 64×64 tile, scalar staging between two barriers"},
	{Name: "staged", File: "gemmvar.metal", Q4TP: "qi_mm_q4tp_st", Q8: "qi_mm_q8_st", TileM: 64, Threads: 128,
		ThreadgroupBytes: tileBytes(64), XAlign: 8, YAlign: 1,
		About: "staging rewrite: hoisted row params, vector loads, magic-number dequant, step k+1 prefetched into registers"},
	{Name: "swizzle", File: "gemmvar.metal", Q4TP: "qi_mm_q4tp_sw", Q8: "qi_mm_q8_sw", TileM: 64, Threads: 128,
		ThreadgroupBytes: tileBytes(64), XAlign: 8, YAlign: 1,
		About: "staged, with the grid blocked in bands of 8 weight tiles (token tile slowest in a band)"},
	{Name: "wide", File: "gemmvar.metal", Q4TP: "qi_mm_q4tp_w128", Q8: "qi_mm_q8_w128", TileM: 128, Threads: 256,
		ThreadgroupBytes: tileBytes(128), XAlign: 8, YAlign: 1, MinN: 1024,
		About: "staged and swizzled, 128 tokens × 64 outputs per threadgroup (8 simdgroups), for n ≥ 1024"},
	{Name: "spec", File: "gemmvar.metal", Q4TP: "qi_mm_q4tp_sp", Q8: "qi_mm_q8_sp", Spec: true, TileM: 64, Threads: 128,
		ThreadgroupBytes: tileBytes(64), XAlign: 8, YAlign: 2,
		About: "staged and swizzled, the epilogue specialised to float or half output with vector stores"},
	{Name: "tensor", File: "gemmtensor.metal", Q4TP: "qi_mm_q4tp_tensor", Q8: "qi_mm_q8_tensor", TensorOps: true, TileM: 64, Threads: 128,
		ThreadgroupBytes: 2*64*40*2 + 64*64*4, XAlign: 8, YAlign: 1,
		About: "Metal 4 tensor operations (MPP matmul2d) over staged half tiles: the neural accelerators of Apple10-family GPUs (M5)"},
}

// GemmVariantNamed returns the variant called name.
func GemmVariantNamed(name string) (GemmVariant, bool) {
	for _, v := range GemmVariants {
		if v.Name == name {
			return v, true
		}
	}
	return GemmVariant{}, false
}

// Functions lists every function the variant may dispatch.
func (v GemmVariant) Functions() []string {
	if v.Spec {
		return []string{v.Q4TP + "_f", v.Q4TP + "_h", v.Q8 + "_f", v.Q8 + "_h"}
	}
	return []string{v.Q4TP, v.Q8}
}

// Function is the function for one codec and output type.
func (v GemmVariant) Function(q8, halfOut bool) string {
	f := v.Q4TP
	if q8 {
		f = v.Q8
	}
	if v.Spec {
		if halfOut {
			return f + "_h"
		}
		return f + "_f"
	}
	return f
}

// Grid is the dispatch for n token rows, rows output features and z batched weights.
func (v GemmVariant) Grid(n, rows, z int) (groups, threads device.Size) {
	return device.Size{Width: ceilDiv(n, v.TileM), Height: rows / 64, Depth: z}, size1(v.Threads)
}

// GemmShape is what a GEMM dispatch's fit depends on: the problem, and the element offsets and
// strides of its operands.
type GemmShape struct {
	N, Rows, K int
	Ldx, Ldy   int
	XOff, YOff []int
}

// Fits reports why the variant cannot run shape (nil when it can): the baseline's own limits
// (rows % 64, k % 32) and the variant's alignments. MinN is not checked here (see Meant).
func (v GemmVariant) Fits(s GemmShape) error {
	if s.Rows%64 != 0 || s.K%32 != 0 || s.Rows <= 0 || s.K <= 0 {
		return fmt.Errorf("gemm variant %s: rows %d and k %d must be positive multiples of 64 and 32", v.Name, s.Rows, s.K)
	}
	if s.Ldx%v.XAlign != 0 {
		return fmt.Errorf("gemm variant %s: ldx %d is not a multiple of %d elements", v.Name, s.Ldx, v.XAlign)
	}
	for _, o := range s.XOff {
		if o%v.XAlign != 0 {
			return fmt.Errorf("gemm variant %s: an x offset of %d elements is not a multiple of %d", v.Name, o, v.XAlign)
		}
	}
	if s.Ldy%v.YAlign != 0 {
		return fmt.Errorf("gemm variant %s: ldy %d is not a multiple of %d elements", v.Name, s.Ldy, v.YAlign)
	}
	for _, o := range s.YOff {
		if o%v.YAlign != 0 {
			return fmt.Errorf("gemm variant %s: a y offset of %d elements is not a multiple of %d", v.Name, o, v.YAlign)
		}
	}
	return nil
}

// Meant reports whether the variant is meant for n token rows (MinN).
func (v GemmVariant) Meant(n int) bool { return n >= v.MinN }

// FlashVariant is one way to run qi_flash (FlashParams, flash.metal's buffers).
type FlashVariant struct {
	Name, File, Function string
	// KeyBlock is the keys per block; Threads and ThreadgroupBytes as for GemmVariant.
	KeyBlock, Threads, ThreadgroupBytes int
	// Align is the element multiple h and ldp must be (16-byte loads), 1 for none; the panel and
	// the prefix cache must then also be bound at 16-byte aligned offsets.
	Align int
	About string
}

// FlashVariants lists the baseline first, then the variants of flashvar.metal.
var FlashVariants = []FlashVariant{
	{Name: "base", File: "flash.metal", Function: "qi_flash", KeyBlock: 32, Threads: 256, ThreadgroupBytes: 64*128*2 + 8, Align: 1,
		About: "the seed's 32-key blocks, K and V staged together by every thread, unpadded rows"},
	{Name: "staged", File: "flashvar.metal", Function: "qi_flash_st", KeyBlock: 32, Threads: 256, ThreadgroupBytes: 64*136*2 + 8, Align: 8,
		About: "per-row source choice, 16-byte loads, rows padded to 136 halves, next block's K and V prefetched into registers"},
	{Name: "k64", File: "flashvar.metal", Function: "qi_flash_k64", KeyBlock: 64, Threads: 256, ThreadgroupBytes: 64*136*2 + 8, Align: 8,
		About: "64-key blocks in the same 17 KiB: K staged, V loaded during Q·Kᵀ and staged in K's place"},
}

// FlashVariantNamed returns the variant called name.
func FlashVariantNamed(name string) (FlashVariant, bool) {
	for _, v := range FlashVariants {
		if v.Name == name {
			return v, true
		}
	}
	return FlashVariant{}, false
}

// Grid is the dispatch for nq queries over heads heads (64 queries per threadgroup).
func (v FlashVariant) Grid(nq, heads int) (groups, threads device.Size) {
	return device.Size{Width: ceilDiv(nq, 64), Height: heads, Depth: 1}, size1(v.Threads)
}

// Fits reports why the variant cannot run attention over a panel of row stride ldp and model
// width h whose panel and prefix buffers are bound at byte offsets offs (nil when it can).
func (v FlashVariant) Fits(h, ldp int, offs ...int) error {
	if h%v.Align != 0 || ldp%v.Align != 0 {
		return fmt.Errorf("flash variant %s: h %d and ldp %d must be multiples of %d elements", v.Name, h, ldp, v.Align)
	}
	for _, o := range offs {
		if o%(2*v.Align) != 0 {
			return fmt.Errorf("flash variant %s: a buffer bound at byte offset %d is not %d-byte aligned", v.Name, o, 2*v.Align)
		}
	}
	return nil
}

// FitsPipeline reports whether a pipeline whose largest threadgroup is maxThreads can run a
// variant of threads threads and tgBytes of threadgroup memory (Metal's 32 KiB).
func FitsPipeline(name string, threads, tgBytes, maxThreads int) error {
	if threads > maxThreads {
		return fmt.Errorf("variant %s needs %d threads per threadgroup; this pipeline allows %d", name, threads, maxThreads)
	}
	if tgBytes > device.MaxThreadgroupMemoryLength {
		return fmt.Errorf("variant %s needs %d bytes of threadgroup memory; Metal allows %d", name, tgBytes, device.MaxThreadgroupMemoryLength)
	}
	return nil
}
