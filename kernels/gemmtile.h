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
// The staged tiles are stored to through uint4 pointers (tile_x_store, tile_q4_store,
// tile_q8_store), so every kernel declares them as uint4 words, which guarantees the 16-byte
// alignment a half array does not, and views them as half; a row must be whole 16-byte words.
static_assert(TILE_LD % 8 == 0, "a staged row must be a whole number of 16-byte words");

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

// acc += as · bsᵀ over one staged TILE_K step for the fragments acc[i][j] with i < rows and
// j < cols (each 0..4) of simdgroup sg's 32×32 part of the block; the others are left as they are.
// A kernel passes fewer than 4 only for fragments whose rows (or columns) all lie past the end of
// C, which it never stores, so the results it stores are those of the full step, bit for bit.
// rows and cols must be the same for every lane of the simdgroup (functions of the threadgroup,
// the simdgroup and the kernel's parameters: tile_live_rows, tile_live_cols). The loops keep their
// constant bounds, so they unroll and the fragment arrays are indexed statically; each load and
// multiply-accumulate sits under a simdgroup-uniform test (folded away for tile_mac's 4, 4).
METAL_FUNC void tile_mac_live(thread simdgroup_float8x8 acc[4][4], threadgroup const half* as, threadgroup const half* bs, ushort sg, uint rows, uint cols)
{
    const uint sm = tile_sg_row(sg);
    const uint sn = tile_sg_col(sg);
    for (uint kk = 0; kk < TILE_K; kk += 8) {
        simdgroup_half8x8 a[4];
        simdgroup_half8x8 b[4];
        for (uint i = 0; i < 4; ++i) {
            if (i < rows) {
                simdgroup_load(a[i], as + (sm + 8 * i) * TILE_LD + kk, TILE_LD);
            }
        }
        for (uint j = 0; j < 4; ++j) {
            if (j < cols) {
                // b[j][kk'][c'] = bs[sn + 8j + c'][kk + kk'], i.e. Bᵀ: a transposed load.
                simdgroup_load(b[j], bs + (sn + 8 * j) * TILE_LD + kk, TILE_LD, ulong2(0, 0), true);
            }
        }
        for (uint i = 0; i < 4; ++i) {
            for (uint j = 0; j < 4; ++j) {
                if (i < rows && j < cols) {
                    simdgroup_multiply_accumulate(acc[i][j], a[i], b[j], acc[i][j]);
                }
            }
        }
    }
}

// acc += as · bsᵀ over one staged TILE_K step: simdgroup sg's 32×32 part of the block.
METAL_FUNC void tile_mac(thread simdgroup_float8x8 acc[4][4], threadgroup const half* as, threadgroup const half* bs, ushort sg)
{
    tile_mac_live(acc, as, bs, sg, 4, 4);
}

// How many of the four 8-wide fragments that start at first, first + 8, … hold an index below n:
// 4 inside, fewer at the end, 0 when all 32 lie past it.
METAL_FUNC uint tile_live(uint first, uint n)
{
    return first >= n ? 0u : min(4u, (n - first + 7) / 8);
}

// The fragment rows of simdgroup sg that hold a row of C below rows, in the block whose first row
// is r0 (tile_mac_live's rows).
METAL_FUNC uint tile_live_rows(uint r0, ushort sg, uint rows) { return tile_live(r0 + tile_sg_row(sg), rows); }

// The fragment columns of simdgroup sg that hold a column of C below cols, in the block whose
// first column is c0 (tile_mac_live's cols).
METAL_FUNC uint tile_live_cols(uint c0, ushort sg, uint cols) { return tile_live(c0 + tile_sg_col(sg), cols); }

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

// ---- Register-staged loading: the GEMM variants (gemmvar.metal, gemmtensor.metal) ----
// The baseline kernels load, convert and store a step's operands between two barriers, so the
// device loads' latency is exposed. The variants split staging in two: tile_*_load reads step
// k0's raw operands into registers (issued before the previous step's multiply-accumulates, so
// its latency overlaps them), tile_*_store converts them and writes threadgroup memory with
// 16-byte stores after the barrier. A threadgroup of T = 2·rows threads stages `rows` rows of x
// (two threads a row) and the 64-row weight tile (P = T/64 threads a row). The staged values are
// the baseline's bit for bit: x is copied, q4tp is (nibble − 8)·scale rounded once to half, q8 is
// half(q · col[k]).

// x: 16 halves of row tid/2 (columns 16·(tid%2)..) as two 16-byte loads; x + row·ldx + k0 must be
// 16-byte aligned (ldx and the slice's element offset multiples of 8: the host checks). Rows ≥ n
// are zero.
struct tile_xregs {
    uint4 a;
    uint4 b;
};

METAL_FUNC tile_xregs tile_x_load(device const half* x, uint ldx, uint n, uint t0, uint k0, ushort tid)
{
    tile_xregs r;
    r.a = uint4(0u);
    r.b = uint4(0u);
    const uint t = t0 + tid / 2;
    if (t < n) {
        device const uint4* src = (device const uint4*)(x + t * ldx + k0 + (tid % 2) * 16);
        r.a = src[0];
        r.b = src[1];
    }
    return r;
}

METAL_FUNC void tile_x_store(threadgroup half* xs, tile_xregs r, ushort tid)
{
    threadgroup uint4* dst = (threadgroup uint4*)(xs + (tid / 2) * TILE_LD + (tid % 2) * 16);
    dst[0] = r.a;
    dst[1] = r.b;
}

// q4tp's 5-bit code of tile g from a row's code plane (LSB first, cmf.md §9.3); the second byte
// is read only when the code spans it, so the read stays inside the row.
METAL_FUNC uint tile_q4_code(device const uchar* codes, uint g)
{
    const uint bit = 5 * g;
    const uint b = bit >> 3;
    const uint sh = bit & 7;
    uint v = codes[b];
    if (sh > 3) {
        v |= uint(codes[b + 1]) << 8;
    }
    return (v >> sh) & 31;
}

// q4tp (cmf.md §9.3), hoisted per row: where the thread's nibbles of the row start, the row's code
// plane, and its f16 params lo and step (read once, not every step).
struct tile_q4row {
    device const uchar* nib;
    device const uchar* codes;
    float lo;
    float step;
};

template <uint T>
METAL_FUNC tile_q4row tile_q4_row(device const uchar* w, uint params_off, uint codes_off, uint code_stride, uint kdim, uint o0, ushort tid)
{
    constexpr uint P = T / TILE_N;
    const uint o = o0 + tid / P;
    device const half* prm = (device const half*)(w + params_off);
    tile_q4row r;
    r.nib = w + o * (kdim / TILE_K) * 16 + (tid % P) * (16 / P);
    r.codes = w + codes_off + o * code_stride;
    r.lo = float(prm[2 * o]);
    r.step = float(prm[2 * o + 1]);
    return r;
}

// One step of q4tp in registers: the thread's 4/P words of nibbles (4-byte loads: payloads are
// only 4-byte aligned) and the tile's scale 2^(lo + code·step), the 5-bit code read in place.
template <uint T>
struct tile_q4regs {
    uint v[4 / (T / TILE_N)];
    float scale;
};

template <uint T>
METAL_FUNC tile_q4regs<T> tile_q4_load(tile_q4row row, uint k0)
{
    constexpr uint NW = 4 / (T / TILE_N);
    const uint g = k0 / TILE_K;
    tile_q4regs<T> r;
    r.scale = exp2(row.lo + float(tile_q4_code(row.codes, g)) * row.step);
    device const uint* src = (device const uint*)(row.nib + g * 16);
    for (uint i = 0; i < NW; ++i) {
        r.v[i] = src[i];
    }
    return r;
}

// Dequantizes with the magic number: 0x6400 | nibble is the half 1024 + nibble, so subtracting
// 1032 gives nibble − 8 exactly; times the float scale, rounded once to half. Byte j of a word
// holds weights 2j (low nibble) and 2j + 1 (high nibble).
template <uint T>
METAL_FUNC void tile_q4_store(threadgroup half* ws, tile_q4regs<T> r, ushort tid)
{
    constexpr uint P = T / TILE_N;
    constexpr uint NW = 4 / P;
    threadgroup uint4* dst = (threadgroup uint4*)(ws + (tid / P) * TILE_LD + (tid % P) * (TILE_K / P));
    for (uint i = 0; i < NW; ++i) {
        const uint v = r.v[i];
        uint4 out;
        for (uint j = 0; j < 4; ++j) {
            const uint u = 0x64006400u | ((v >> (8 * j)) & 15u) | (((v >> (8 * j + 4)) & 15u) << 16);
            const half2 n8 = as_type<half2>(u) - half2(1032.0f);
            out[j] = as_type<uint>(half2(float2(n8) * r.scale));
        }
        dst[i] = out;
    }
}

// One step of q8 in registers: the thread's TILE_K/P int8 codes of its row (4-byte loads) and
// their column factors.
template <uint T>
struct tile_q8regs {
    uint v[TILE_K / (T / TILE_N) / 4];
    float c[TILE_K / (T / TILE_N)];
};

template <uint T>
METAL_FUNC tile_q8regs<T> tile_q8_load(device const char* q, device const float* col, uint kdim, uint o0, uint k0, ushort tid)
{
    constexpr uint P = T / TILE_N;
    constexpr uint NB = TILE_K / P;
    const uint c0 = k0 + (tid % P) * NB;
    device const uint* src = (device const uint*)(q + (o0 + tid / P) * kdim + c0);
    tile_q8regs<T> r;
    for (uint i = 0; i < NB / 4; ++i) {
        r.v[i] = src[i];
    }
    for (uint i = 0; i < NB; ++i) {
        r.c[i] = col[c0 + i];
    }
    return r;
}

template <uint T>
METAL_FUNC void tile_q8_store(threadgroup half* ws, tile_q8regs<T> r, ushort tid)
{
    constexpr uint P = T / TILE_N;
    constexpr uint NB = TILE_K / P;
    threadgroup uint4* dst = (threadgroup uint4*)(ws + (tid / P) * TILE_LD + (tid % P) * NB);
    for (uint m = 0; m < NB / 8; ++m) {
        const char4 lo = as_type<char4>(r.v[2 * m]);
        const char4 hi = as_type<char4>(r.v[2 * m + 1]);
        uint4 out;
        for (uint j = 0; j < 2; ++j) {
            out[j] = as_type<uint>(half2(half(float(lo[2 * j]) * r.c[8 * m + 2 * j]), half(float(lo[2 * j + 1]) * r.c[8 * m + 2 * j + 1])));
            out[j + 2] = as_type<uint>(half2(half(float(hi[2 * j]) * r.c[8 * m + 4 + 2 * j]), half(float(hi[2 * j + 1]) * r.c[8 * m + 5 + 2 * j])));
        }
        dst[m] = out;
    }
}

#endif // EASEL_GEMMTILE_H
