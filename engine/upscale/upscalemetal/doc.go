// Package upscalemetal runs engine/upscale's networks on a Metal device (a Mac's GPU, or the
// kernel emulator in tests and behind --backend emulator): the same network code over
// engine/ml/metalops, whose convolution is the VAE's implicit GEMM (kernels/vae.metal, half
// operands, float accumulation) and whose element-wise kernel and vae_shuffle add LeakyReLU, PReLU
// and the pixel (un)shuffle. Like the device VAE it is a metalops.Network: resident only while a
// picture is upscaled, checked against the device's working set first, declining with a sentence
// (then the CPU runs it).
package upscalemetal
