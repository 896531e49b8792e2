// Package vae is Qwen-Image-2.1's image autoencoder (diffusers AutoencoderKLQwenImage21, spec §8)
// for still images, written once against the engine/ml op set: Decode turns normalized latents into
// an RGBA image in [-1, 1], Encode turns an image into latents, DecodeTiled and EncodeTiled decode
// large grids and encode large images tile by tile with blended overlaps (ChooseTiling and
// ChooseEncodeTiling pick one piece or tiles against a memory budget), and ToRGBA does the
// pipeline's 8-bit post-processing (§9).
//
// It is written the way every Easel network is: weights bound by ml.Binder from the `weight` tags
// of its parts (weights.go), the forward pass on an ml.Scope (one scope per decode or encode, and
// per tile of a tiled one) that owns every activation and drops each as soon as the next exists
// (ops.go), and cancellation through ml.WithContext. The dry-run planner (plan.go) runs this same
// code on a backend that only counts.
//
// Layouts. Activations on the backend are channel-first [C, H, W] (what ml.Conv2D takes). On the
// host, Latents and Image are channel-first too: Data[c·H·W + y·W + x]. The denoiser works with
// packed latent tokens [T, 64], token t = y·w + x and the channel last (spec §4, diffusers
// _pack_latents); FromTokens and Latents.Tokens convert between the two (engine/latents).
// Channel-wise RMS norms run over the channels of each pixel in place (ml.Backend.ChannelRMSNorm).
//
// The "causal 3D" machinery reduces for one frame as spec §8.2 describes: time_conv is never run,
// the encoder's AvgDown3D shortcuts are fixed average-pool convolutions (half of their channels
// are zero where a zero frame is padded in front), and the decoder's DupUp3D shortcuts are
// channel selections followed by a nearest ×2 upsample.
package vae
