// Package vaemetal runs Qwen-Image-2.1's autoencoder (engine/vae) on a Metal device: the decoder,
// tiled or in one piece, and the encoder. The network is engine/vae's own code, bound to
// engine/ml/metalops's device implementation of the ops the VAE uses (convolution, channel RMS norm, SiLU, nearest
// upsampling, the mid-block attention, additions, transposes) over the kernels of
// kernels/vae.metal. So the layer order, the residual shortcuts and the tiling with its blended
// seams are exactly the CPU path's; only the arithmetic moves to the device.
//
// Precision: activations are float32 on the device; the convolutions (an implicit GEMM over the
// f16 weights read in place from the model file's mapping) and the attention GEMMs stage their
// operands as half and accumulate in float. Norms, softmax and element-wise ops are float.
//
// Memory: the weights are a no-copy arena over the mapping (engine/ml/metal's), made for each
// call and released after it with every activation buffer, so between calls the VAE holds only
// its biases and gains and the denoiser has the device to itself. Activations come from a pool
// of device buffers. Before each decode or encode VAE checks the planned peak (engine/vae's dry
// run plus the attention's score buffer), the weights and what the denoiser holds against the
// device's working set, and returns a *metal.Declined error when the work does not fit (or when
// a buffer would pass the device's largest); Runner then runs the CPU model instead, whose
// result is exactly today's CPU result.
//
// The ops are encoded into command buffers as they are called (engine/ml/metalops).
package vaemetal
