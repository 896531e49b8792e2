// Package qi21metal runs the Qwen-Image-2.1 denoiser on a Metal GPU: the qi21
// prefill/step/release contract implemented directly with the fused kernels of package kernels,
// not op by op. Everything else — the text encoder, the VAE, the host work of the denoiser
// (txt_in, img_in of the condition images, the timestep modulation, RoPE tables) — stays on an
// ml.Backend (the CPU reference); the host work is qi21's own (Model.PrefixRows, Modulation,
// RopeTables), so the device path cannot drift from the CPU path there. Runner pairs the device
// denoiser with the CPU model and falls back to it on a decline; PlanProgramFor plans a
// program's device memory from the configs alone; BenchBlock times one block of a geometry on a
// device (easel bench dit-metal). The device runtime it shares with the other networks' device
// paths (devices, the weight arena, limits, Declined, knobs) is package engine/ml/metal.
//
// Per block the encoder issues: row op (gated residual + modulated LayerNorm) → qkv GEMM (z = 3,
// one fused panel) → q/k RMSNorm + RoPE in place → flash attention over [prefix K/V | own rows]
// → O GEMM → row op → gate/up GEMM (z = 2) → SwiGLU → down GEMM; a command buffer covers two
// blocks. Prefill runs the prefix rows once under block-causal visibility and keeps every layer's
// K/V on the device; Step runs the target rows against [cached prefix, target].
//
// Weights are read in place: one arena of no-copy buffers over the model file's mapping, split
// page-aligned at the device's largest buffer, q4tp and q8 payloads bound at their offsets. The
// arena is held only while the denoiser runs: ReleaseWeights drops it between runs (the small
// auxiliary float buffer and the LoRA factors stay) and the next Prefill makes it again.
// Activations are half behind power-of-two guards (metal.Guards, EASEL_METAL_*_SHIFT), the
// residual stream f32. Before allocating, every buffer is checked against the device's largest
// buffer and the total against its recommended working set; when the work does not fit, the
// denoiser declines with a *metal.Declined error and the caller runs the CPU path instead.
//
// The encoding is written against kernels/device, so the same code runs on the darwinkit device
// (engine/ml/metal.SystemDevice, only on a Mac) and on the CPU emulator kernels/emu (tests here
// compare the whole prefill and step with the CPU backend and the reference data).
//
// Knobs: EASEL_METAL_PROF=1 (one command buffer per op class, GPU time per class),
// EASEL_METAL_AMAX=1 (largest stored |value| at each half site, per pass),
// EASEL_METAL_{ATTN,QKV,AO,FFN,HID}_SHIFT (the guards, 0–14).
package qi21metal
