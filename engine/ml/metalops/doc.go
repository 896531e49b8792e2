// Package metalops is the engine/ml op set on a Metal device (kernels/device: the Mac's GPU, or
// the emulator in tests), for the networks whose Metal path is their own engine code bound to a
// device backend (engine/vae/vaemetal, engine/qwen3vl/qwen3vlmetal) rather than a fused chain like
// the denoiser's (engine/ml/metal).
//
// Tensors are float32 on the device. The matrix products (convolutions as implicit GEMMs, linear
// layers, attention) stage their operands as half in threadgroup memory and accumulate in float
// with simdgroup 8×8 multiply-accumulates; norms, softmax, rotary embeddings and element-wise ops
// are float. Weights are read in place from the model file's mapping through a weight arena
// (engine/ml/metal's, set with SetArena): f16 payloads directly, q8_2f and q8_row int8 codes with
// their row scales and column fields as float side buffers; other codecs are converted to half on
// the device when first used.
//
// Ops are encoded into command buffers as they are called; a buffer is committed every
// cbDispatches dispatches (short enough for the GPU watchdog) and at every Download, which waits.
// Activations come from a pool of device buffers reused by size; a buffer past the device's
// largest is a *metal.Declined error (TakeDecline returns it, since callers may wrap the op's
// error as text).
package metalops
