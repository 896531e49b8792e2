// Package ml is the small op set every Easel backend implements (docs/ARCHITECTURE.md §3):
// quantized linear layers, the DiT's row ops (gated residual + modulated LayerNorm), RMSNorm and
// LayerNorm, per-head norm + RoPE, attention over [prefix K/V, own rows] with block-causal or
// causal visibility, the activations, conv2d and nearest upsampling for the VAE, and a few
// element-wise ops. Networks (engine/qi21, engine/qwen3vl, engine/vae) are written once against
// Backend.
//
// Tensors are opaque handles owned by a backend: float32 row-major host slices on the CPU
// backend (engine/ml/cpu), device buffers on Metal. A tensor's logical layout is always row-major
// with the last dimension contiguous; "rows" means the product of all dimensions but the last.
// Weights are not tensors: they are *quant.Tensor payloads read in place from the model file, so a
// backend can dequantize them tile by tile (CPU) or bind the file mapping (Metal).
//
// Every op carries a timing class (Class) and a backend accumulates the time it spends per class in
// its Timings, which the pipeline reads for its per-class panel.
package ml
