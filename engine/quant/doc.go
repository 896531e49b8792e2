// Package quant holds the weight codecs of the CMF container — q4tp, q8_2f, q8_row, bf16, f16,
// f32 — bit-compatible with cortiq (docs/reference/cmf.md §5, §9): their dtype ids and exact payload
// sizes, encoders that produce the bytes cortiq's 0.5.100 encoders produce (Encode, EncodeFrom,
// EncodeTo, reading a tensor block by block), and DequantizeRows, which decodes any row range to
// float32 without allocating, for the CPU GEMM's tiles.
//
// What each codec costs, as relative RMS error ‖w − ŵ‖/‖w‖ on a [4096, 4096] weight with σ-scale
// 0.02 (TestCodecErrorBudget holds each under its budget; figures and throughput in
// docs/BENCHMARKS.md):
//
//	codec   bits/weight  Gaussian  Student-t(ν=3)
//	q4tp    4.164        0.0920    0.1334
//	q8_2f   8.008        0.0087    0.0383
//	q8_row  8.004        0.0087    0.0432
//	bf16    16           0.0017    0.0017
//	f16     16           0.00021   0.00021
package quant
