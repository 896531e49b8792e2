// Package pipeline makes one image end to end (docs/ARCHITECTURE.md §4, docs/reference/qi21-spec.md
// §0.1): it prepares the condition images, builds and encodes the prompt (and the negative prompt
// under CFG) with Qwen3-VL, encodes the condition images with the VAE, prefills the denoiser's
// prefix once per prompt, walks the flow-matching schedule from the seed's noise with Euler steps
// (CFG as spec §7), and decodes the latents to an RGBA image.
//
// A Pipeline is built once from an open model file (New) and runs one request at a time (Run,
// which blocks: the app calls it from its worker goroutine),
// reporting stages, step progress with ETA, per-class op timings, a memory ledger and a preview
// of the x0 estimate per step through a channel of events (see Event for the delivery policy).
// Cancelling the context stops the run within one backend op; the denoiser's programs are
// released and the error wraps context.Canceled with the stage it stopped in.
//
// The three networks run through small interfaces (TextEncoder, Denoiser, VAE) placed by Options:
// on the pipeline's backend by default, or on a device (package pipelinemetal, the only part of
// the pipeline that knows Metal). Each placement is one Placement value (notice, device, budget,
// device time, timings, resident bytes, close); a call the device declines runs on the CPU
// instead and the run reports the Decline (Event.Notice). The memory ledger then counts each
// program's K/V at the size it has where it lives (half on the device) and the device's working
// set as the denoiser's budget.
//
// The stages are also exported (PrepareImages, EncodePrompt, EncodeConditionImages, Denoise,
// Decode) so tests can feed the reference implementation's own processor outputs and noise
// into the rest of the chain.
package pipeline
