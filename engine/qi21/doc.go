// Package qi21 is the Qwen-Image-2.1 denoiser (spec §6): the single-stream DiT written once
// against engine/ml, and the host work around it — txt_in and img_in, the joint layout of text,
// condition-image and target rows, image ids and block-causal visibility, the 3-axis RoPE
// positions, the timestep embedding and the shared modulation at t = 0 and at σ.
//
// A generation uses it through the prefill/step contract the Metal backend implements too:
// Prefill runs the prefix (text and condition-image rows, t = 0 modulation, block-causal
// visibility) through every block once and keeps each layer's keys and values in a Program; Step
// runs the target rows at σ against [cached prefix, target] and returns the velocity; Release
// drops a Program. Two programs live at once (positive and negative prompt under CFG). Forward is
// the uncached pass over the whole joint sequence, the yardstick the cached path is tested against.
package qi21
