// The half-tile GEMM core shared by every simdgroup-matrix GEMM of the backends: gemm.metal (the
// denoiser's qi_mm_q4tp and qi_mm_q8), ops.metal (the text encoder's and vision tower's ops_linear
// and ops_mm) and vae.metal (vae_conv). One copy, so a fix to one GEMM is a fix to all of them.
//
// Not a library: kernels.Source pastes this file where a .metal file says #include "gemmtile.h"
// (after `using namespace metal;`), because newLibraryWithSource compiles a string without a file
// system; the Mac's compiler and the emulator both get the pasted text.
//
// The tile: a threadgroup of 128 threads (4 simdgroups) computes a 64×64 block of C = A·Bᵀ, k in
// steps of TILE_K = 32. Both operands are staged as half in threadgroup memory, one 64 × TILE_LD
// array each: as[r][k] holds row r of the block's A, bs[c][k] row c of Bᵀ (column c of C).
// Simdgroup sg owns rows tile_sg_row(sg).. and columns tile_sg_col(sg).. of the block as 4×4
// float 8×8 fragments; in a fragment, a lane holds elements (tile_lane_row, tile_lane_col) and
// (tile_lane_row, tile_lane_col + 1): the layout qi_fragprobe verifies on the device.
//
// The staging functions map thread tid to 16 consecutive k of staged row tid/2: columns
// 16·(tid%2) .. +16 of the 32.
#ifndef EASEL_GEMMTILE_H
#define EASEL_GEMMTILE_H

constant constexpr uint TILE_M = 64;            // rows of C per threadgroup
constant constexpr uint TILE_N = 64;            // columns of C per threadgroup
constant constexpr uint TILE_K = 32;            // reduction step
constant constexpr uint TILE_LD = TILE_K + 8;   // padded row of a staged operand, in halves

// First row of C (within the block) that simdgroup sg accumulates.
METAL_FUNC uint tile_sg_row(ushort sg) { return 32 * (sg / 2); }

// First column of C (within the block) that simdgroup sg accumulates.
METAL_FUNC uint tile_sg_col(ushort sg) { return 32 * (sg % 2); }

// Row of the 8×8 fragment whose elements lane holds in thread_elements().
METAL_FUNC uint tile_lane_row(ushort lane) { return 4 * ((lane >> 4) & 1) + ((lane >> 1) & 3); }

// Column of the first of the two fragment elements lane holds (the second is the next column).
METAL_FUNC uint tile_lane_col(ushort lane) { return 4 * ((lane >> 3) & 1) + 2 * (lane & 1); }

// Sets every accumulator fragment to zero.
METAL_FUNC void tile_zero(thread simdgroup_float8x8 acc[4][4])
{
    for (uint i = 0; i < 4; ++i) {
        for (uint j = 0; j < 4; ++j) {
            acc[i][j] = make_filled_simdgroup_matrix<float, 8>(0.0f);
        }
    }
}

// acc += as · bsᵀ over one staged TILE_K step: simdgroup sg's 32×32 part of the block.
METAL_FUNC void tile_mac(thread simdgroup_float8x8 acc[4][4], threadgroup const half* as, threadgroup const half* bs, ushort sg)
{
    const uint sm = tile_sg_row(sg);
    const uint sn = tile_sg_col(sg);
    for (uint kk = 0; kk < TILE_K; kk += 8) {
        simdgroup_half8x8 a[4];
        simdgroup_half8x8 b[4];
        for (uint i = 0; i < 4; ++i) {
            simdgroup_load(a[i], as + (sm + 8 * i) * TILE_LD + kk, TILE_LD);
        }
        for (uint j = 0; j < 4; ++j) {
            // b[j][kk'][c'] = bs[sn + 8j + c'][kk + kk'], i.e. Bᵀ: a transposed load.
            simdgroup_load(b[j], bs + (sn + 8 * j) * TILE_LD + kk, TILE_LD, ulong2(0, 0), true);
        }
        for (uint i = 0; i < 4; ++i) {
            for (uint j = 0; j < 4; ++j) {
                simdgroup_multiply_accumulate(acc[i][j], a[i], b[j], acc[i][j]);
            }
        }
    }
}

// The q8 codecs (cmf.md §9.1, §9.2: q8_2f, and q8_row with col = 1): w[o, k] = q[o, k] · col[k]
// · rs[o]. Stages rows r0 .. r0+64 × [k0, k0+32) of the int8 codes q [rows][kdim] as
// half(q · col[k]) into dst[64][TILE_LD]; the row scale is applied in float by tile_q8_out.
// Masked: rows ≥ rows and k ≥ kdim stage 0 (else every row and k must exist).
template <bool Masked>
METAL_FUNC void tile_stage_q8(threadgroup half* dst, device const char* q, device const float* col,
                              uint rows, uint kdim, uint r0, uint k0, ushort tid)
{
    const uint r = tid / 2;
    const uint c = (tid % 2) * 16;
    const uint o = r0 + r;
    for (uint i = 0; i < 16; ++i) {
        const uint k = k0 + c + i;
        half v = half(0.0f);
        if (!Masked || (o < rows && k < kdim)) {
            v = half(float(q[o * kdim + k]) * col[k]);
        }
        dst[r * TILE_LD + c + i] = v;
    }
}

// The q8 epilogue: an accumulated output v of row o (a column of C) times the row scale rs[o].
METAL_FUNC float tile_q8_out(float v, device const float* rs, uint o) { return v * rs[o]; }

// Stages rows r0 .. r0+64 × [k0, k0+32) of a half matrix w [rows][kdim] (an f16 weight read in
// place) into dst[64][TILE_LD]; rows ≥ rows and k ≥ kdim stage 0.
METAL_FUNC void tile_stage_half(threadgroup half* dst, device const half* w, uint rows, uint kdim, uint r0, uint k0, ushort tid)
{
    const uint r = tid / 2;
    const uint c = (tid % 2) * 16;
    const uint o = r0 + r;
    for (uint i = 0; i < 16; ++i) {
        const uint k = k0 + c + i;
        dst[r * TILE_LD + c + i] = (o < rows && k < kdim) ? w[o * kdim + k] : half(0.0f);
    }
}

// The half guard of a float operand: half holds at most 65504, so an operand whose largest |x|
// (amax[0], float bits from vae_amax) exceeds 16384 is staged as half(x · s) with
// s = 2^−⌈log2(amax / 16384)⌉ and the accumulator divided by s; 1 when on is 0 or amax fits.
// Exact powers of two, so inputs that fit are staged exactly as without the guard.
METAL_FUNC float tile_guard_scale(device const uint* amax, uint on)
{
    if (on == 0) {
        return 1.0f;
    }
    const float m = as_type<float>(amax[0]);
    return m > 16384.0f ? exp2(-ceil(log2(m / 16384.0f))) : 1.0f;
}

#endif // EASEL_GEMMTILE_H
