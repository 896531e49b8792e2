// Package cpu is Easel's reference backend for engine/ml: float32 math on host memory. Linear
// layers dequantize their weights a bounded tile of rows at a time and multiply with cblas sgemm
// (OpenBLAS on Linux, Accelerate on macOS; a pure-Go GEMM with the build tag noblas or without
// cgo). Row-wise ops spread over every core with goroutines; the GEMM's own threads do the same
// for the multiplications, and the two never run at once.
package cpu
