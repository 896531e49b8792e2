// Package kernels holds the Metal Shading Language sources of the Metal device paths (engine/qi21/qi21metal,
// engine/ml/metalops), embedded so the app compiles them at run time with newLibraryWithSource, and so tests can run
// the very same files under the CPU emulator in kernels/emu.
//
// Each .metal file is one library. Metal compiles source strings without a file system, so a
// sibling file cannot be #included by the compiler; instead Source pastes the shared fragments
// where a file says #include "x.h" (between #line directives, so diagnostics name the right file
// and line), and the device and the emulator both compile the pasted text:
//
//	gemmtile.h                     the half-tile GEMM core of gemm.metal, gemmvar.metal, ops.metal
//	                               and vae.metal: 64×64×32 tile geometry, the simdgroup 8×8
//	                               multiply-accumulate, fragment layout, q8 and f16 weight staging,
//	                               q8 row scale, half guard, and the variants' register-staged
//	                               loaders (one copy: TestSharedTileHasNoSecondCopy)
//	mmparams.h                     struct MmParams of the denoiser's GEMMs (baseline and variants)
//	flashparams.h                  struct FlashParams of its attention (baseline and variants)
//
//	fragprobe.metal  qi_fragprobe  the simdgroup 8×8 fragment-layout probe
//	gemm.metal       qi_mm_q4tp    y = x·Wᵀ, W in q4tp dequantized to half while staged
//	                 qi_mm_q8      y = x·Wᵀ, W in q8_2f / q8_row, int8 × column field staged
//	gemmvar.metal    qi_mm_*_st…   the GEMM's variants (variants.go, docs/METAL.md §7): staging
//	                               rewrite, swizzled grid, 128-token tile, specialised epilogue
//	gemmtensor.metal qi_mm_*_tensor the GEMM through Metal 4 tensor operations (MPP matmul2d), a
//	                               library of its own, compiled only where the device has the API
//	flash.metal      qi_flash      attention over [prefix K/V | own rows], 32-key blocks, block-causal
//	flashvar.metal   qi_flash_st   the attention's variants: staging rewrite with padded rows,
//	                 qi_flash_k64  64-key blocks
//	qkrope.metal     qi_qkrope     q/k RMSNorm + interleaved RoPE in place, q pre-scaled for exp2
//	rowop.metal      qi_rowop      gated residual and modulated LayerNorm on the f32 stream
//	swiglu.metal     qi_swiglu     SiLU(gate)·up to half
//	kvcopy.metal     qi_kvcopy     a prefill layer's K/V into the prefix cache
//	embed.metal      qi_embed      img_in: latent tokens to the f32 stream
//	final.metal      qi_final      LayerNorm · (1 + scale) and proj_out to the velocity
//	amax.metal       qi_amax       largest |half| of a site, for the guards' diagnostics
//	lora.metal       qi_lora_*     LoRA terms of a linear layer: down (x·Aᵀ ⊙ s), up (y += t·Bᵀ),
//	                               and proj_out's normalized input
//	vae.metal        vae_*         the autoencoder's: implicit-GEMM convolution, channel RMS norm,
//	                               element-wise ops, nearest upsampling, pixel (un)shuffle, transpose
//	decode.metal     dec_*         the text encoder's one-row decode in float: GEMV over stored
//	                               weights, RMSNorm, q/k norm + mRoPE, cached attention, SwiGLU
//	ops.metal        ops_*         the text encoder's and vision tower's: linear layers (f16, q8),
//	                               batched GEMMs and masked softmax for attention, row norms, q/k
//	                               norm + rotary embedding
//
// Each file documents its buffers, parameter struct and dispatch shape at the top. The Go side of
// those contracts lives here too: params.go mirrors the parameter structs (checked field by field
// against the compiled MSL), grids.go gives each kernel's dispatch shape, and fragprobe.go checks
// the probe's output. The device interface is kernels/device; kernels/emu runs the files on the
// CPU in tests.
package kernels

import (
	"embed"
	"fmt"
	"io/fs"
)

//go:embed *.metal *.h
var sources embed.FS

// Source returns the MSL text of the named library file, e.g. "gemm.metal", as the compiler gets
// it: with every shared fragment it includes pasted in (see the package comment).
func Source(name string) ([]byte, error) {
	b, err := File(name)
	if err != nil {
		return nil, err
	}
	return pasteFragments(name, b)
}

// File returns the embedded text of a .metal file or shared fragment exactly as stored.
func File(name string) ([]byte, error) {
	b, err := sources.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("kernels: no embedded source %q (have %v and fragments %v)", name, Names(), Fragments())
	}
	return b, nil
}

// Names lists the embedded .metal files (the libraries).
func Names() []string {
	names, _ := fs.Glob(sources, "*.metal")
	return names
}

// Fragments lists the embedded shared fragments (.h), which only Source's pasting uses.
func Fragments() []string {
	names, _ := fs.Glob(sources, "*.h")
	return names
}

// Library is one .metal file and the kernel functions it defines.
type Library struct {
	File    string
	Kernels []string
}

// Libraries lists every file with its kernels, in the order of the table above; the tests check
// it against what each file really defines.
var Libraries = []Library{
	{"fragprobe.metal", []string{"qi_fragprobe"}},
	{"gemm.metal", []string{"qi_mm_q4tp", "qi_mm_q8"}},
	{"gemmvar.metal", []string{"qi_mm_q4tp_st", "qi_mm_q8_st", "qi_mm_q4tp_sw", "qi_mm_q8_sw", "qi_mm_q4tp_w128", "qi_mm_q8_w128",
		"qi_mm_q4tp_sp_f", "qi_mm_q4tp_sp_h", "qi_mm_q8_sp_f", "qi_mm_q8_sp_h"}},
	{"gemmtensor.metal", []string{"qi_mm_q4tp_tensor", "qi_mm_q8_tensor"}},
	{"flash.metal", []string{"qi_flash"}},
	{"flashvar.metal", []string{"qi_flash_st", "qi_flash_k64"}},
	{"qkrope.metal", []string{"qi_qkrope"}},
	{"rowop.metal", []string{"qi_rowop"}},
	{"swiglu.metal", []string{"qi_swiglu"}},
	{"kvcopy.metal", []string{"qi_kvcopy"}},
	{"embed.metal", []string{"qi_embed"}},
	{"final.metal", []string{"qi_final"}},
	{"amax.metal", []string{"qi_amax"}},
	{"lora.metal", []string{"qi_lora_down_h", "qi_lora_down_f", "qi_lora_up", "qi_lora_up_h", "qi_lora_lnscale"}},
	{"vae.metal", []string{"vae_amax", "vae_conv", "vae_chnorm", "vae_elt", "vae_upsample", "vae_shuffle", "vae_transpose"}},
	{"ops.metal", []string{"ops_linear", "ops_mm", "ops_softmax", "ops_rownorm", "ops_headrope"}},
	{"decode.metal", DecodeKernels},
}
