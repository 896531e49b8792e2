// Package seed turns a user's seed into the exact starting noise diffusers would draw for it, so a
// seed copied from a diffusers run (or from another Easel install) reproduces the same image.
//
// It reproduces torch.Generator("cpu").manual_seed(s) followed by torch.randn of a float32
// tensor, bit for bit: PyTorch's mt19937 engine (generator.go), its uniform and Box–Muller
// transforms, and the vectorised normal_fill path ATen's CPU kernel takes for contiguous float32
// tensors of 16 or more elements on x86-64 with AVX2 — including the Cephes-style log/sin/cos of
// avx_mathfun.h and the fused multiply-adds the compiler formed in them (randn.go, mathfun.go).
// LatentNoise then gives the noise in the shape diffusers' randn_tensor draws it,
// (1, 1, channels, h, w) (latents.go); engine/latents packs it into the denoiser's token layout.
//
// Scope, as verified against testdata/golden/randn_cases.safetensors: float32 tensors of 16 or
// more elements, as torch draws them on x86-64 (the AVX2 kernel produced the reference). torch
// itself draws different normals from the same uniforms where ATen does not build that kernel
// (ARM, including Apple Silicon, and MSVC builds take another normal_fill with other log/sin/cos)
// and for half/bfloat16 dtypes, so "the same seed" there means a different image. The
// scalar path for fewer than 16 elements follows ATen's normal_distribution<double> but has no
// reference case; the pipeline never draws fewer than 64 values.
//
// Variation seeds (variation.go) blend two seeds' noises with AUTOMATIC1111's slerp, so a small
// strength gives a picture near the seed's own and strength 1 the variation seed's own.
package seed
