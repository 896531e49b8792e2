// The denoiser's quantized GEMM through Metal 4's tensor operations (MetalPerformancePrimitives
// matmul2d), which on Apple10-family GPUs (M5) run on the per-core neural accelerators. Same
// buffers, MmParams and dispatch as qi_mm_q4tp / qi_mm_q8 (threadgroups (ceil(n/64), rows/64, z),
// 128 threads).
//
// A library of its own: a Mac without the tensor API (before macOS 26, or a GPU before the
// Apple10 family) cannot compile a file that merely includes these headers, so the host compiles
// this file only where the device has the API, and a failure here takes no other kernel down.
//
// Per K step of 32: x and the weight tile are staged into threadgroup memory by gemmtile.h's
// register-staged loaders (q4tp / q8 dequantized to half exactly as the baseline stages them,
// rows past n zero), then one matmul2d over the 4 simdgroups multiplies the 64 × 32 x tile by the
// transposed 64 × 32 weight tile into a 64 × 64 float cooperative tensor. Both operands come from
// threadgroup memory with full extents, so no out-of-extent read is relied on. The result is
// stored into a threadgroup float tile and written by the same epilogue arithmetic as the
// baseline (mul, the q8 row scale, float or half).
//
//   qi_mm_q4tp_tensor, qi_mm_q8_tensor
//
// Requirements: as gemm.metal's, plus ldx and every x_off multiples of 8 (16-byte x loads).
// Threadgroup memory: 2 · 64 · TILE_LD halves + 64 · 64 floats = 26 624 bytes.
#include <metal_stdlib>
#include <metal_tensor>
#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>
using namespace metal;
#include "mmparams.h"
#include "gemmtile.h"

constant constexpr uint MT_CN = 64;   // the float result tile's row: 64 outputs

static_assert(2 * 64 * TILE_LD * 2 + 64 * MT_CN * 4 <= 32768, "the tensor GEMM's tiles exceed 32 KiB of threadgroup memory");

// A staged operand: 64 rows of TILE_K halves at pitch TILE_LD, as a tensor (extents innermost
// first: TILE_K columns, 64 rows).
using mt_operand = tensor<threadgroup half, dextents<int, 2>, tensor_inline>;
using mt_result = tensor<threadgroup float, dextents<int, 2>, tensor_inline>;

template <bool Q8>
METAL_FUNC void mt_body(device const uchar* w, device const float* rs, device const float* col,
                        device const half* x, device uchar* y, constant MmParams& p,
                        threadgroup half* xs, threadgroup half* ws, threadgroup float* cs,
                        uint3 tg, ushort tid)
{
    constexpr uint T = 128;
    const uint t0 = tg.x * 64;
    const uint o0 = tg.y * TILE_N;
    const uint z = tg.z;
    x += p.x_off[z];

    tile_q4row row;
    if (!Q8) {
        row = tile_q4_row<T>(w, p.params_off, p.codes_off, p.code_stride, p.k, o0, tid);
    }
    tile_xregs xr = tile_x_load(x, p.ldx, p.n, t0, 0, tid);
    tile_q4regs<T> q4;
    tile_q8regs<T> q8;
    if (Q8) {
        q8 = tile_q8_load<T>((device const char*)w, col, p.k, o0, 0, tid);
    } else {
        q4 = tile_q4_load<T>(row, 0);
    }

    // y tile (64 tokens × 64 outputs) = x tile (64 × 32) · weight tile (64 × 32)ᵀ, accumulated.
    mpp::tensor_ops::matmul2d<mpp::tensor_ops::matmul2d_descriptor(64, 64, 32, false, true, false,
                                                                    mpp::tensor_ops::matmul2d_descriptor::mode::multiply_accumulate),
                              execution_simdgroups<4>> mm;
    mt_operand tx(xs, dextents<int, 2>(int(TILE_K), 64), array<int, 2>({1, int(TILE_LD)}));
    mt_operand tw(ws, dextents<int, 2>(int(TILE_K), 64), array<int, 2>({1, int(TILE_LD)}));
    auto acc = mm.get_destination_cooperative_tensor<mt_operand, mt_operand, float>();
    for (int i = 0; i < acc.get_capacity(); ++i) {
        if (acc.is_valid_element(i)) {
            acc[i] = 0.0f;
        }
    }
    for (uint k0 = 0; k0 < p.k; k0 += TILE_K) {
        tile_x_store(xs, xr, tid);
        if (Q8) {
            tile_q8_store<T>(ws, q8, tid);
        } else {
            tile_q4_store<T>(ws, q4, tid);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (k0 + TILE_K < p.k) {
            xr = tile_x_load(x, p.ldx, p.n, t0, k0 + TILE_K, tid);
            if (Q8) {
                q8 = tile_q8_load<T>((device const char*)w, col, p.k, o0, k0 + TILE_K, tid);
            } else {
                q4 = tile_q4_load<T>(row, k0 + TILE_K);
            }
        }
        mm.run(tx, tw, acc);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    mt_result tc(cs, dextents<int, 2>(int(MT_CN), 64));
    acc.store(tc);
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // Thread tid writes 32 outputs of token row tid/2.
    const uint r = tid / 2;
    const uint t = t0 + r;
    if (t >= p.n) {
        return;
    }
    for (uint c = (tid % 2) * 32; c < (tid % 2) * 32 + 32; ++c) {
        const uint o = o0 + c;
        float v = cs[r * MT_CN + c] * p.mul;
        if (Q8) {
            v = tile_q8_out(v, rs, o);
        }
        const uint at = p.y_off[z] + t * p.ldy + o;
        if (p.epi == 1) {
            ((device half*)y)[at] = half(v);
        } else {
            ((device float*)y)[at] = v;
        }
    }
}

kernel void qi_mm_q4tp_tensor(device const uchar* w0 [[buffer(0)]], device const uchar* w1 [[buffer(1)]],
                              device const uchar* w2 [[buffer(2)]], device const half* x [[buffer(6)]],
                              device uchar* y [[buffer(7)]], constant MmParams& p [[buffer(8)]],
                              uint3 tg [[threadgroup_position_in_grid]], ushort tid [[thread_index_in_threadgroup]])
{
    threadgroup uint4 xs_words[(64 * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    threadgroup float cs[64 * MT_CN];
    device const uchar* w = tg.z == 0 ? w0 : (tg.z == 1 ? w1 : w2);
    mt_body<false>(w, (device const float*)w, (device const float*)w, x, y, p, xs, ws, cs, tg, tid);
}

kernel void qi_mm_q8_tensor(device const uchar* w0 [[buffer(0)]], device const uchar* w1 [[buffer(1)]],
                            device const uchar* w2 [[buffer(2)]], device const float* rs0 [[buffer(3)]],
                            device const float* rs1 [[buffer(4)]], device const float* rs2 [[buffer(5)]],
                            device const half* x [[buffer(6)]], device uchar* y [[buffer(7)]],
                            constant MmParams& p [[buffer(8)]], device const float* col0 [[buffer(9)]],
                            device const float* col1 [[buffer(10)]], device const float* col2 [[buffer(11)]],
                            uint3 tg [[threadgroup_position_in_grid]], ushort tid [[thread_index_in_threadgroup]])
{
    threadgroup uint4 xs_words[(64 * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    threadgroup float cs[64 * MT_CN];
    const uint z = tg.z;
    device const uchar* w = z == 0 ? w0 : (z == 1 ? w1 : w2);
    device const float* rs = z == 0 ? rs0 : (z == 1 ? rs1 : rs2);
    device const float* col = z == 0 ? col0 : (z == 1 ? col1 : col2);
    mt_body<true>(w, rs, col, x, y, p, xs, ws, cs, tg, tid);
}
