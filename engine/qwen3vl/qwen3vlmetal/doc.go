// Package qwen3vlmetal runs Qwen-Image-2.1's text encoder (engine/qwen3vl: the Qwen3-VL language
// model, and the vision tower for condition images) on a Metal device. The network is
// engine/qwen3vl's own code bound to engine/ml/metalops's device op set: q8 (or f16) linear layers
// over the weights read in place, RMSNorm, q/k norm with the interleaved-mRoPE tables (built on
// the host, as on the CPU), grouped-query causal attention, SwiGLU; in the tower LayerNorm,
// GELU-tanh, the 2-D rotary embedding, bidirectional attention per image, the patch mergers and
// the DeepStack taps. Token embedding and the mergers' exact GELU stay on the host, as engine/qwen3vl
// does them for any backend without those ops.
//
// Memory follows engine/vae/vaemetal: the weight arena over the mapping is made for each Encode
// and released after it with every activation buffer (only the norms' gains and the biases stay
// on the device), and each Encode checks its estimated peak, the weights and what the denoiser
// holds against the device's working set first, returning a *metal.Declined error when they do
// not fit; Runner then runs the CPU encoder instead, whose result is exactly today's.
package qwen3vlmetal
