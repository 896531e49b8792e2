// Quantized GEMMs of the Qwen-Image-2.1 denoiser: y[t, o] = mul · Σ_k x[t, k] · W[o, k]
// (y = x·Wᵀ), with W read in place from the model file in one of two codecs (cmf.md §9):
//
//   qi_mm_q4tp  W in q4tp: each 32-weight tile's nibbles are dequantized to half while they are
//               staged into threadgroup memory, scale = exp2(lo[o] + code·step[o]).
//   qi_mm_q8    W in q8_2f or q8_row: int8 codes are staged as half(q · col[k]) (col = 1 for
//               q8_row) and the row scale rs[o] is applied in the float epilogue.
//
// x is half, row-major with leading dimension ldx; y is float (epi 0) or half (epi 1) with
// leading dimension ldy. Accumulation is float in simdgroup 8×8 multiply-accumulates.
//
// Dispatch: threadgroups (ceil(n/64), rows/64, z), 128 threads (4 simdgroups). A threadgroup
// computes 64 tokens × 64 outputs; simdgroup s owns tokens 32·(s/2).. and outputs 32·(s%2)..
// as 4×4 fragments. z (1..3) batches up to three weights of one shape (q, k, v or gate, up):
// slice z reads weight buffer z, x at x_off[z] and writes y at y_off[z] (offsets in elements).
//
// Buffers: 0,1,2 weight payload of slice 0,1,2 (q4tp: the whole payload, with its params and
//          code planes at params_off / codes_off; q8: the int8 codes)
//          3,4,5 q8 row scale rs[rows] (float) of slice 0,1,2 (unused by q4tp)
//          9,10,11 q8 column field col[k] (float, all 1 for q8_row) of slice 0,1,2
//          6 x (half), 7 y (float or half), 8 MmParams.
// Requirements: rows % 64 == 0, k % 32 == 0, 4-byte aligned payloads; n is free (edges masked).
// The tile geometry, the multiply-accumulate, the q8 staging and row scale and the fragment layout
// the epilogue addresses (the one qi_fragprobe verifies) are gemmtile.h's, shared with ops.metal's
// ops_linear (the text encoder's q8 GEMMs) and vae.metal's vae_conv.
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;
#include "mmparams.h"
#include "gemmtile.h"


// A threadgroup is one gemmtile.h tile: TILE_M tokens × TILE_N outputs; TILE_K is one q4tp tile.

// Stages x[t0 .. t0+64) × [k0, k0+32) as half into xs[64][TILE_LD]; rows past n are zero.
// Thread tid copies 16 consecutive elements of row tid/2.
static void mm_stage_x(threadgroup half* xs, device const half* x, uint ldx, uint n, uint t0, uint k0, ushort tid)
{
    const uint r = tid / 2;
    const uint c = (tid % 2) * 16;
    const uint t = t0 + r;
    for (uint i = 0; i < 16; ++i) {
        xs[r * TILE_LD + c + i] = t < n ? x[t * ldx + k0 + c + i] : half(0.0f);
    }
}

// Stages W[o0 .. o0+64) × [k0, k0+32) from q4tp as half into ws[64][TILE_LD]. Thread tid decodes
// bytes 8·(tid%2) .. +8 of row o0 + tid/2's tile k0/32: byte b holds weight 2b in its low nibble
// and 2b+1 in its high nibble, value (nibble − 8) · 2^(lo + code·step).
static void mm_stage_q4tp(threadgroup half* ws, device const uchar* w, constant MmParams& p, uint o0, uint k0, ushort tid)
{
    const uint r = tid / 2;
    const uint o = o0 + r;
    const uint g = k0 / TILE_K;
    const uint gpr = p.k / TILE_K;
    device const half* prm = (device const half*)(w + p.params_off);
    device const uchar* codes = w + p.codes_off + o * p.code_stride;
    const uint code = tile_q4_code(codes, g);
    const float scale = exp2(float(prm[2 * o]) + float(code) * float(prm[2 * o + 1]));
    device const uchar* nib = w + (o * gpr + g) * 16 + (tid % 2) * 8;
    threadgroup half* dst = ws + r * TILE_LD + (tid % 2) * 16;
    for (uint i = 0; i < 8; ++i) {
        const uchar q = nib[i];
        dst[2 * i] = half((float(q & 15) - 8.0f) * scale);
        dst[2 * i + 1] = half((float(q >> 4) - 8.0f) * scale);
    }
}

// The shared body: stage, multiply-accumulate, write. Q8 selects the codec.
template <bool Q8>
static void mm_body(device const uchar* w, device const float* rs, device const float* col,
                    device const half* x, device uchar* y, constant MmParams& p,
                    threadgroup half* xs, threadgroup half* ws,
                    uint3 tg, ushort tid, ushort sg, ushort lane)
{
    const uint t0 = tg.x * TILE_M;
    const uint o0 = tg.y * TILE_N;
    const uint z = tg.z;
    x += p.x_off[z];

    simdgroup_float8x8 acc[4][4];
    tile_zero(acc);
    for (uint k0 = 0; k0 < p.k; k0 += TILE_K) {
        mm_stage_x(xs, x, p.ldx, p.n, t0, k0, tid);
        if (Q8) {
            // rows % 64 == 0 and k % 32 == 0: every staged row and k exists.
            tile_stage_q8<false>(ws, (device const char*)w, col, p.rows, p.k, o0, k0, tid);
        } else {
            mm_stage_q4tp(ws, w, p, o0, k0, tid);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        tile_mac(acc, xs, ws, sg);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    // Epilogue: lane holds fragment elements (r, c) and (r, c + 1).
    const uint sm = tile_sg_row(sg);
    const uint sn = tile_sg_col(sg);
    const uint fr = tile_lane_row(lane);
    const uint fc = tile_lane_col(lane);
    for (uint i = 0; i < 4; ++i) {
        const uint t = t0 + sm + 8 * i + fr;
        if (t >= p.n) {
            continue;
        }
        for (uint j = 0; j < 4; ++j) {
            for (uint e = 0; e < 2; ++e) {
                const uint o = o0 + sn + 8 * j + fc + e;
                float v = acc[i][j].thread_elements()[e] * p.mul;
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
    }
}

kernel void qi_mm_q4tp(device const uchar* w0 [[buffer(0)]],
                       device const uchar* w1 [[buffer(1)]],
                       device const uchar* w2 [[buffer(2)]],
                       device const half* x [[buffer(6)]],
                       device uchar* y [[buffer(7)]],
                       constant MmParams& p [[buffer(8)]],
                       uint3 tg [[threadgroup_position_in_grid]],
                       ushort tid [[thread_index_in_threadgroup]],
                       ushort sg [[simdgroup_index_in_threadgroup]],
                       ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(TILE_M * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    device const uchar* w = tg.z == 0 ? w0 : (tg.z == 1 ? w1 : w2);
    mm_body<false>(w, (device const float*)w, (device const float*)w, x, y, p, xs, ws, tg, tid, sg, lane);
}

kernel void qi_mm_q8(device const uchar* w0 [[buffer(0)]],
                     device const uchar* w1 [[buffer(1)]],
                     device const uchar* w2 [[buffer(2)]],
                     device const float* rs0 [[buffer(3)]],
                     device const float* rs1 [[buffer(4)]],
                     device const float* rs2 [[buffer(5)]],
                     device const half* x [[buffer(6)]],
                     device uchar* y [[buffer(7)]],
                     constant MmParams& p [[buffer(8)]],
                     device const float* col0 [[buffer(9)]],
                     device const float* col1 [[buffer(10)]],
                     device const float* col2 [[buffer(11)]],
                     uint3 tg [[threadgroup_position_in_grid]],
                     ushort tid [[thread_index_in_threadgroup]],
                     ushort sg [[simdgroup_index_in_threadgroup]],
                     ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(TILE_M * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    const uint z = tg.z;
    device const uchar* w = z == 0 ? w0 : (z == 1 ? w1 : w2);
    device const float* rs = z == 0 ? rs0 : (z == 1 ? rs1 : rs2);
    device const float* col = z == 0 ? col0 : (z == 1 ? col1 : col2);
    mm_body<true>(w, rs, col, x, y, p, xs, ws, tg, tid, sg, lane);
}
