// Package qwen3vl is Qwen-Image-2.1's text encoder, Qwen3-VL (spec qi21-spec.md §1, §10): the
// language model (GQA attention with q/k RMSNorm, interleaved 3-axis mRoPE, SwiGLU), the vision
// tower that turns condition images into token embeddings (patch embedding, interpolated position
// embeddings, 2-D rotary, ViT blocks, 2×2 merger) and DeepStack, which adds features of early vision
// blocks to the image-token rows of the first language-model layers.
//
// The encoder binds its weights by name from a quant.Source (te.* and vis.* in cortiq's layout,
// geometry from te.config_json and vis.config_json) and runs on any ml.Backend. Its output is the
// residual stream after the last decoder layer, before the final RMSNorm: what the Qwen-Image
// denoiser was trained on. The pipeline then drops the system-prompt rows (DropPrefixRows).
package qwen3vl
