// Variants of gemm.metal's quantized GEMMs, y[t, o] = mul · Σ_k x[t, k] · W[o, k], for the
// autotuner to choose from on the user's Mac (docs/METAL.md §7). Same buffers, MmParams and
// results as qi_mm_q4tp / qi_mm_q8 (which stay the baseline); each variant is its own kernel
// function, specialised at compile time (template instantiation, the effect function constants
// have), so a pipeline carries exactly one variant:
//
//   qi_mm_{q4tp,q8}_st     staging rewrite: row params hoisted, the 5-bit code read in place,
//                          4-byte weight loads and 16-byte x loads, magic-number dequantization,
//                          step k+1 loaded into registers before step k's multiply-accumulates,
//                          16-byte threadgroup stores (gemmtile.h's tile_*_load / tile_*_store)
//   qi_mm_{q4tp,q8}_sw     _st with a block-swizzled grid: consecutive threadgroups sweep
//                          MV_SWIZZLE weight tiles for one token tile, so a band of weight tiles
//                          and the token tile in flight stay in the caches
//   qi_mm_{q4tp,q8}_w128   _sw with a 128-token × 64-output threadgroup (256 threads, 8
//                          simdgroups of 32×32): half the dequantization and weight reads per FLOP
//   qi_mm_{q4tp,q8}_sp_f   _sw with the epilogue specialised to float (_f) or half (_h) output
//   qi_mm_{q4tp,q8}_sp_h   and written as one float2 / half2 store per fragment row
//
// Requirements on top of gemm.metal's (rows % 64 == 0, k % 32 == 0, 4-byte aligned payloads):
// ldx and every x_off multiples of 8 (16-byte x loads); for _sp_*, ldy and every y_off even.
// kernels.GemmVariants states them for the host, which falls back to the baseline when a
// dispatch breaks one. Dispatch: threadgroups (ceil(n/TM), rows/64, z) with TM = 64 (128
// threads) or 128 for _w128 (256 threads). Every variant gives the baseline's output bit for bit:
// the staged operands and the accumulation order are the same.
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;
#include "mmparams.h"
#include "gemmtile.h"


constant constexpr uint MV_SWIZZLE = 8;   // weight tiles per band of the swizzled grid

// Threadgroup memory of a TM-token tile: x and W staged, TILE_LD-padded rows of half.
static_assert((64 + TILE_N) * TILE_LD * 2 <= 32768, "the 64-token tile exceeds 32 KiB of threadgroup memory");
static_assert((128 + TILE_N) * TILE_LD * 2 <= 32768, "the 128-token tile exceeds 32 KiB of threadgroup memory");

// The (token tile, weight tile) of threadgroup tg in a grid of ntg: the grid's own order, or
// blocked in bands of MV_SWIZZLE weight tiles with the token tile varying slowest in a band.
template <bool Swz>
METAL_FUNC uint2 mv_tile(uint3 tg, uint3 ntg)
{
    if (!Swz) {
        return tg.xy;
    }
    const uint id = tg.y * ntg.x + tg.x;
    const uint band = id / (MV_SWIZZLE * ntg.x);
    const uint in_band = id % (MV_SWIZZLE * ntg.x);
    const uint width = min(MV_SWIZZLE, ntg.y - band * MV_SWIZZLE);
    return uint2(in_band / width, band * MV_SWIZZLE + in_band % width);
}

// The epilogue. Epi < 0 reads p.epi for every element as the baseline does; Epi 0 / 1 is float /
// half output baked in, two adjacent outputs per store.
template <bool Q8, int Epi>
METAL_FUNC void mv_write(thread simdgroup_float8x8 acc[4][4], device const float* rs, device uchar* y,
                         constant MmParams& p, uint t0, uint o0, uint z, ushort sg, ushort lane)
{
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
            const uint o = o0 + sn + 8 * j + fc;
            float v[2];
            for (uint e = 0; e < 2; ++e) {
                v[e] = acc[i][j].thread_elements()[e] * p.mul;
                if (Q8) {
                    v[e] = tile_q8_out(v[e], rs, o + e);
                }
            }
            const uint at = p.y_off[z] + t * p.ldy + o;
            if (Epi == 1) {
                *(device half2*)((device half*)y + at) = half2(float2(v[0], v[1]));
            } else if (Epi == 0) {
                *(device float2*)((device float*)y + at) = float2(v[0], v[1]);
            } else {
                for (uint e = 0; e < 2; ++e) {
                    if (p.epi == 1) {
                        ((device half*)y)[at + e] = half(v[e]);
                    } else {
                        ((device float*)y)[at + e] = v[e];
                    }
                }
            }
        }
    }
}

// The staged body for a TM-token tile (2·TM threads): prefetch step k+1 into registers while
// step k multiplies.
template <bool Q8, uint TM, bool Swz, int Epi>
METAL_FUNC void mv_body(device const uchar* w, device const float* rs, device const float* col,
                        device const half* x, device uchar* y, constant MmParams& p,
                        threadgroup half* xs, threadgroup half* ws,
                        uint3 tg, uint3 ntg, ushort tid, ushort sg, ushort lane)
{
    constexpr uint T = 2 * TM;
    const uint2 tile = mv_tile<Swz>(tg, ntg);
    const uint t0 = tile.x * TM;
    const uint o0 = tile.y * TILE_N;
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

    simdgroup_float8x8 acc[4][4];
    tile_zero(acc);
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
        tile_mac(acc, xs, ws, sg);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    mv_write<Q8, Epi>(acc, rs, y, p, t0, o0, z, sg, lane);
}

// Slice z's weight, row scale and column field.
METAL_FUNC device const uchar* mv_pick(uint z, device const uchar* a, device const uchar* b, device const uchar* c)
{
    return z == 0 ? a : (z == 1 ? b : c);
}

METAL_FUNC device const float* mv_pickf(uint z, device const float* a, device const float* b, device const float* c)
{
    return z == 0 ? a : (z == 1 ? b : c);
}

kernel void qi_mm_q4tp_st(device const uchar* w0 [[buffer(0)]], device const uchar* w1 [[buffer(1)]],
                          device const uchar* w2 [[buffer(2)]], device const half* x [[buffer(6)]],
                          device uchar* y [[buffer(7)]], constant MmParams& p [[buffer(8)]],
                          uint3 tg [[threadgroup_position_in_grid]], uint3 ntg [[threadgroups_per_grid]],
                          ushort tid [[thread_index_in_threadgroup]], ushort sg [[simdgroup_index_in_threadgroup]],
                          ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(64 * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    device const uchar* w = mv_pick(tg.z, w0, w1, w2);
    mv_body<false, 64, false, -1>(w, (device const float*)w, (device const float*)w, x, y, p, xs, ws, tg, ntg, tid, sg, lane);
}

kernel void qi_mm_q8_st(device const uchar* w0 [[buffer(0)]], device const uchar* w1 [[buffer(1)]],
                        device const uchar* w2 [[buffer(2)]], device const float* rs0 [[buffer(3)]],
                        device const float* rs1 [[buffer(4)]], device const float* rs2 [[buffer(5)]],
                        device const half* x [[buffer(6)]], device uchar* y [[buffer(7)]],
                        constant MmParams& p [[buffer(8)]], device const float* col0 [[buffer(9)]],
                        device const float* col1 [[buffer(10)]], device const float* col2 [[buffer(11)]],
                        uint3 tg [[threadgroup_position_in_grid]], uint3 ntg [[threadgroups_per_grid]],
                        ushort tid [[thread_index_in_threadgroup]], ushort sg [[simdgroup_index_in_threadgroup]],
                        ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(64 * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    const uint z = tg.z;
    mv_body<true, 64, false, -1>(mv_pick(z, w0, w1, w2), mv_pickf(z, rs0, rs1, rs2), mv_pickf(z, col0, col1, col2),
                                 x, y, p, xs, ws, tg, ntg, tid, sg, lane);
}

kernel void qi_mm_q4tp_sw(device const uchar* w0 [[buffer(0)]], device const uchar* w1 [[buffer(1)]],
                          device const uchar* w2 [[buffer(2)]], device const half* x [[buffer(6)]],
                          device uchar* y [[buffer(7)]], constant MmParams& p [[buffer(8)]],
                          uint3 tg [[threadgroup_position_in_grid]], uint3 ntg [[threadgroups_per_grid]],
                          ushort tid [[thread_index_in_threadgroup]], ushort sg [[simdgroup_index_in_threadgroup]],
                          ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(64 * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    device const uchar* w = mv_pick(tg.z, w0, w1, w2);
    mv_body<false, 64, true, -1>(w, (device const float*)w, (device const float*)w, x, y, p, xs, ws, tg, ntg, tid, sg, lane);
}

kernel void qi_mm_q8_sw(device const uchar* w0 [[buffer(0)]], device const uchar* w1 [[buffer(1)]],
                        device const uchar* w2 [[buffer(2)]], device const float* rs0 [[buffer(3)]],
                        device const float* rs1 [[buffer(4)]], device const float* rs2 [[buffer(5)]],
                        device const half* x [[buffer(6)]], device uchar* y [[buffer(7)]],
                        constant MmParams& p [[buffer(8)]], device const float* col0 [[buffer(9)]],
                        device const float* col1 [[buffer(10)]], device const float* col2 [[buffer(11)]],
                        uint3 tg [[threadgroup_position_in_grid]], uint3 ntg [[threadgroups_per_grid]],
                        ushort tid [[thread_index_in_threadgroup]], ushort sg [[simdgroup_index_in_threadgroup]],
                        ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(64 * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    const uint z = tg.z;
    mv_body<true, 64, true, -1>(mv_pick(z, w0, w1, w2), mv_pickf(z, rs0, rs1, rs2), mv_pickf(z, col0, col1, col2),
                                x, y, p, xs, ws, tg, ntg, tid, sg, lane);
}

kernel void qi_mm_q4tp_w128(device const uchar* w0 [[buffer(0)]], device const uchar* w1 [[buffer(1)]],
                            device const uchar* w2 [[buffer(2)]], device const half* x [[buffer(6)]],
                            device uchar* y [[buffer(7)]], constant MmParams& p [[buffer(8)]],
                            uint3 tg [[threadgroup_position_in_grid]], uint3 ntg [[threadgroups_per_grid]],
                            ushort tid [[thread_index_in_threadgroup]], ushort sg [[simdgroup_index_in_threadgroup]],
                            ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(128 * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    device const uchar* w = mv_pick(tg.z, w0, w1, w2);
    mv_body<false, 128, true, -1>(w, (device const float*)w, (device const float*)w, x, y, p, xs, ws, tg, ntg, tid, sg, lane);
}

kernel void qi_mm_q8_w128(device const uchar* w0 [[buffer(0)]], device const uchar* w1 [[buffer(1)]],
                          device const uchar* w2 [[buffer(2)]], device const float* rs0 [[buffer(3)]],
                          device const float* rs1 [[buffer(4)]], device const float* rs2 [[buffer(5)]],
                          device const half* x [[buffer(6)]], device uchar* y [[buffer(7)]],
                          constant MmParams& p [[buffer(8)]], device const float* col0 [[buffer(9)]],
                          device const float* col1 [[buffer(10)]], device const float* col2 [[buffer(11)]],
                          uint3 tg [[threadgroup_position_in_grid]], uint3 ntg [[threadgroups_per_grid]],
                          ushort tid [[thread_index_in_threadgroup]], ushort sg [[simdgroup_index_in_threadgroup]],
                          ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(128 * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    const uint z = tg.z;
    mv_body<true, 128, true, -1>(mv_pick(z, w0, w1, w2), mv_pickf(z, rs0, rs1, rs2), mv_pickf(z, col0, col1, col2),
                                 x, y, p, xs, ws, tg, ntg, tid, sg, lane);
}

kernel void qi_mm_q4tp_sp_f(device const uchar* w0 [[buffer(0)]], device const uchar* w1 [[buffer(1)]],
                            device const uchar* w2 [[buffer(2)]], device const half* x [[buffer(6)]],
                            device uchar* y [[buffer(7)]], constant MmParams& p [[buffer(8)]],
                            uint3 tg [[threadgroup_position_in_grid]], uint3 ntg [[threadgroups_per_grid]],
                            ushort tid [[thread_index_in_threadgroup]], ushort sg [[simdgroup_index_in_threadgroup]],
                            ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(64 * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    device const uchar* w = mv_pick(tg.z, w0, w1, w2);
    mv_body<false, 64, true, 0>(w, (device const float*)w, (device const float*)w, x, y, p, xs, ws, tg, ntg, tid, sg, lane);
}

kernel void qi_mm_q4tp_sp_h(device const uchar* w0 [[buffer(0)]], device const uchar* w1 [[buffer(1)]],
                            device const uchar* w2 [[buffer(2)]], device const half* x [[buffer(6)]],
                            device uchar* y [[buffer(7)]], constant MmParams& p [[buffer(8)]],
                            uint3 tg [[threadgroup_position_in_grid]], uint3 ntg [[threadgroups_per_grid]],
                            ushort tid [[thread_index_in_threadgroup]], ushort sg [[simdgroup_index_in_threadgroup]],
                            ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(64 * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    device const uchar* w = mv_pick(tg.z, w0, w1, w2);
    mv_body<false, 64, true, 1>(w, (device const float*)w, (device const float*)w, x, y, p, xs, ws, tg, ntg, tid, sg, lane);
}

kernel void qi_mm_q8_sp_f(device const uchar* w0 [[buffer(0)]], device const uchar* w1 [[buffer(1)]],
                          device const uchar* w2 [[buffer(2)]], device const float* rs0 [[buffer(3)]],
                          device const float* rs1 [[buffer(4)]], device const float* rs2 [[buffer(5)]],
                          device const half* x [[buffer(6)]], device uchar* y [[buffer(7)]],
                          constant MmParams& p [[buffer(8)]], device const float* col0 [[buffer(9)]],
                          device const float* col1 [[buffer(10)]], device const float* col2 [[buffer(11)]],
                          uint3 tg [[threadgroup_position_in_grid]], uint3 ntg [[threadgroups_per_grid]],
                          ushort tid [[thread_index_in_threadgroup]], ushort sg [[simdgroup_index_in_threadgroup]],
                          ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(64 * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    const uint z = tg.z;
    mv_body<true, 64, true, 0>(mv_pick(z, w0, w1, w2), mv_pickf(z, rs0, rs1, rs2), mv_pickf(z, col0, col1, col2),
                               x, y, p, xs, ws, tg, ntg, tid, sg, lane);
}

kernel void qi_mm_q8_sp_h(device const uchar* w0 [[buffer(0)]], device const uchar* w1 [[buffer(1)]],
                          device const uchar* w2 [[buffer(2)]], device const float* rs0 [[buffer(3)]],
                          device const float* rs1 [[buffer(4)]], device const float* rs2 [[buffer(5)]],
                          device const half* x [[buffer(6)]], device uchar* y [[buffer(7)]],
                          constant MmParams& p [[buffer(8)]], device const float* col0 [[buffer(9)]],
                          device const float* col1 [[buffer(10)]], device const float* col2 [[buffer(11)]],
                          uint3 tg [[threadgroup_position_in_grid]], uint3 ntg [[threadgroups_per_grid]],
                          ushort tid [[thread_index_in_threadgroup]], ushort sg [[simdgroup_index_in_threadgroup]],
                          ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(64 * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    const uint z = tg.z;
    mv_body<true, 64, true, 1>(mv_pick(z, w0, w1, w2), mv_pickf(z, rs0, rs1, rs2), mv_pickf(z, col0, col1, col2),
                               x, y, p, xs, ws, tg, ntg, tid, sg, lane);
}
