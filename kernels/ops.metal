// The transformer ops of engine/ml/metalops (the Qwen3-VL text encoder and vision tower run on
// them through engine/qwen3vl/qwen3vlmetal). Tensors are float32, row-major; the matrix products
// stage their operands as half in threadgroup memory and accumulate in float with simdgroup 8×8
// multiply-accumulates: gemmtile.h's tile, multiply-accumulate and fragment layout, shared with
// gemm.metal (the denoiser's) and vae.metal.
//
//   ops_linear   y[t, o] = Σ_k x[t, k] · W[o, k] with W half [out, in] (an f16 weight read in
//                place), or int8 codes staged as half(q · col[k]) with the row scale rs[o] applied
//                in the float epilogue (q8_2f; q8_row with col = 1): gemmtile.h's q8 staging and row
//                scale, the ones gemm.metal's qi_mm_q8 uses, with every edge masked.
//                Dispatch: (⌈n/64⌉, ⌈out/64⌉) × 128 threads.
//                Buffers: 0 W, 1 x, 2 y, 3 col (float), 4 rs (float), 5 LinearParams, 6 amax of x
//                (float bits from vae.metal's vae_amax; read when guard is set: x is staged as
//                half(x · s), s = 2^−⌈log2(amax / 16384)⌉ when amax > 16384, and y divided by s).
//   ops_mm       batched C_z = alpha · A_z · B_z (Bᵀ when trans_b): slice z reads A at z·a_z, B at
//                (z / group)·b_z and writes C at z·c_z (elements), each with its leading dimension
//                (attention: one slice per head, group = heads per key/value head).
//                Dispatch: (⌈n/64⌉, ⌈m/64⌉, batch) × 128. Buffers: 0 A, 1 B, 2 C, 3 BatchParams.
//   ops_softmax  softmax in place of rows of [z][m][n] scores, keys past a row's visible count
//                (vis[row0 + i], when use_vis) set to 0; rows i ≥ valid of each slice skipped.
//                Dispatch: z·m × 256.
//                Buffers: 0 S, 1 vis (int), 2 SoftParams.
//   ops_rownorm  per row: RMS norm (mode 0; weight w, or w + 1 when zero_centred) or LayerNorm
//                (mode 1; biased variance, weight and bias optional). Dispatch: rows × 256.
//                Buffers: 0 x, 1 w, 2 b, 3 y, 4 RowNormParams.
//   ops_headrope per (row, head), in place: RMS norm with w[hd] (when has_w), then the rotary
//                embedding from cos/sin [rows][hd/2] (when has_rope; pairs interleaved or split
//                in halves). Dispatch: ⌈rows·heads/64⌉ × 64.
//                Buffers: 0 x, 1 w, 2 cos, 3 sin, 4 HeadParams.
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;
#include "gemmtile.h"

struct LinearParams {
    uint n;      // token rows of x and y
    uint out;    // output features = rows of W
    uint in;     // reduction length = columns of W and x
    uint ldx;    // elements between rows of x
    uint ldy;    // elements between rows of y
    uint q8;     // 0: W half; 1: W int8 codes with col and rs
    uint guard;  // 1: stage x · s, s the power of two that keeps it in half (amax buffer)
    uint pad1;
};

struct BatchParams {
    uint m;        // rows of A and C
    uint n;        // columns of C
    uint k;        // reduction length
    uint lda;      // elements between rows of A
    uint ldb;      // elements between rows of B
    uint ldc;      // elements between rows of C
    uint trans_b;  // 0: B is [k, n]; 1: B is [n, k]
    float alpha;   // scale of every output
    uint a_z;      // elements between slices of A
    uint b_z;      // elements between slices of B
    uint c_z;      // elements between slices of C
    uint group;    // slices of A per slice of B
};

struct SoftParams {
    uint n;        // row length (keys)
    uint ld;       // elements between rows
    uint m;        // rows per slice (queries)
    uint row0;     // query index of row 0 (for vis)
    uint use_vis;  // 1: mask keys past vis[row0 + i]
    uint valid;    // rows of each slice to process (the rest are skipped)
    uint pad1;
    uint pad2;
};

struct RowNormParams {
    uint cols;          // row length
    uint mode;          // 0 RMS norm, 1 LayerNorm
    uint has_w;         // 1: multiply by w
    uint has_b;         // 1: add b (LayerNorm)
    uint zero_centred;  // 1: RMS norm weight is w + 1
    float eps;
    uint pad0;
    uint pad1;
};

struct HeadParams {
    uint rows;      // rows of x
    uint heads;     // heads per row
    uint hd;        // head dimension (even)
    uint has_w;     // 1: RMS-normalize each head with w
    uint has_rope;  // 1: rotate
    uint split;     // 0: pairs (2p, 2p+1); 1: pairs (p, p + hd/2)
    float eps;
    uint pad0;
};

kernel void ops_linear(device const uchar* w [[buffer(0)]],
                       device const float* x [[buffer(1)]],
                       device float* y [[buffer(2)]],
                       device const float* col [[buffer(3)]],
                       device const float* rs [[buffer(4)]],
                       constant LinearParams& p [[buffer(5)]],
                       device const uint* amax [[buffer(6)]],
                       uint3 tg [[threadgroup_position_in_grid]],
                       ushort tid [[thread_index_in_threadgroup]],
                       ushort sg [[simdgroup_index_in_threadgroup]],
                       ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 xs_words[(TILE_M * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    threadgroup uint4 ws_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    const uint t0 = tg.x * TILE_M;
    const uint o0 = tg.y * TILE_N;
    const uint r = tid / 2;
    const uint c = (tid % 2) * 16;
    const float gs = tile_guard_scale(amax, p.guard);
    // Fragments of tokens past p.n or outputs past p.out are never stored (the epilogue's checks).
    const uint live_rows = tile_live_rows(t0, sg, p.n);
    const uint live_cols = tile_live_cols(o0, sg, p.out);

    simdgroup_float8x8 acc[4][4];
    tile_zero(acc);
    for (uint k0 = 0; k0 < p.in; k0 += TILE_K) {
        const uint t = t0 + r;
        for (uint i = 0; i < 16; ++i) {
            const uint k = k0 + c + i;
            xs[r * TILE_LD + c + i] = (t < p.n && k < p.in) ? half(x[t * p.ldx + k] * gs) : half(0.0f);
        }
        if (p.q8 != 0) {
            tile_stage_q8<true>(ws, (device const char*)w, col, p.out, p.in, o0, k0, tid);
        } else {
            tile_stage_half(ws, (device const half*)w, p.out, p.in, o0, k0, tid);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        tile_mac_live(acc, xs, ws, sg, live_rows, live_cols);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    const uint sm = tile_sg_row(sg);
    const uint sn = tile_sg_col(sg);
    const uint fr = tile_lane_row(lane);
    const uint fc = tile_lane_col(lane);
    const float inv = 1.0f / gs;
    for (uint i = 0; i < 4; ++i) {
        const uint t = t0 + sm + 8 * i + fr;
        if (t >= p.n) {
            continue;
        }
        for (uint j = 0; j < 4; ++j) {
            for (uint e = 0; e < 2; ++e) {
                const uint o = o0 + sn + 8 * j + fc + e;
                if (o < p.out) {
                    float v = acc[i][j].thread_elements()[e] * inv;
                    if (p.q8 != 0) {
                        v = tile_q8_out(v, rs, o);
                    }
                    y[t * p.ldy + o] = v;
                }
            }
        }
    }
}

kernel void ops_mm(device const float* a [[buffer(0)]],
                   device const float* b [[buffer(1)]],
                   device float* c [[buffer(2)]],
                   constant BatchParams& p [[buffer(3)]],
                   uint3 tg [[threadgroup_position_in_grid]],
                   ushort tid [[thread_index_in_threadgroup]],
                   ushort sg [[simdgroup_index_in_threadgroup]],
                   ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 as_words[(TILE_M * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* as = (threadgroup half*)as_words;
    threadgroup uint4 bs_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* bs = (threadgroup half*)bs_words;
    const uint n0 = tg.x * TILE_N;
    const uint m0 = tg.y * TILE_M;
    const uint z = tg.z;
    a += z * p.a_z;
    b += (z / p.group) * p.b_z;
    c += z * p.c_z;
    const uint r = tid / 2;
    const uint cc = (tid % 2) * 16;
    // Fragments of rows past p.m or columns past p.n are never stored (the epilogue's checks).
    const uint live_rows = tile_live_rows(m0, sg, p.m);
    const uint live_cols = tile_live_cols(n0, sg, p.n);

    simdgroup_float8x8 acc[4][4];
    tile_zero(acc);
    for (uint k0 = 0; k0 < p.k; k0 += TILE_K) {
        const uint am = m0 + r;
        for (uint i = 0; i < 16; ++i) {
            const uint kx = k0 + cc + i;
            as[r * TILE_LD + cc + i] = (am < p.m && kx < p.k) ? half(a[am * p.lda + kx]) : half(0.0f);
        }
        if (p.trans_b != 0) {
            const uint bn = n0 + r;
            for (uint i = 0; i < 16; ++i) {
                const uint kx = k0 + cc + i;
                bs[r * TILE_LD + cc + i] = (bn < p.n && kx < p.k) ? half(b[bn * p.ldb + kx]) : half(0.0f);
            }
        } else {
            const uint j = tid % 64;
            const uint kb = (tid / 64) * 16;
            const uint bn = n0 + j;
            for (uint i = 0; i < 16; ++i) {
                const uint kx = k0 + kb + i;
                bs[j * TILE_LD + kb + i] = (bn < p.n && kx < p.k) ? half(b[kx * p.ldb + bn]) : half(0.0f);
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        tile_mac_live(acc, as, bs, sg, live_rows, live_cols);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    const uint sm = tile_sg_row(sg);
    const uint sn = tile_sg_col(sg);
    const uint fr = tile_lane_row(lane);
    const uint fc = tile_lane_col(lane);
    for (uint i = 0; i < 4; ++i) {
        const uint mm = m0 + sm + 8 * i + fr;
        if (mm >= p.m) {
            continue;
        }
        for (uint j = 0; j < 4; ++j) {
            for (uint e = 0; e < 2; ++e) {
                const uint nn = n0 + sn + 8 * j + fc + e;
                if (nn < p.n) {
                    c[mm * p.ldc + nn] = acc[i][j].thread_elements()[e] * p.alpha;
                }
            }
        }
    }
}

// Threadgroup-wide reduction over 256 threads (8 simdgroups): max (is_max) or sum.
static float ot_reduce(float v, threadgroup float* part, ushort sg, ushort lane, bool is_max)
{
    v = is_max ? simd_max(v) : simd_sum(v);
    if (lane == 0) {
        part[sg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float t = part[0];
    for (uint i = 1; i < 8; ++i) {
        t = is_max ? max(t, part[i]) : t + part[i];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return t;
}

kernel void ops_softmax(device float* s [[buffer(0)]],
                        device const int* vis [[buffer(1)]],
                        constant SoftParams& p [[buffer(2)]],
                        uint row [[threadgroup_position_in_grid]],
                        ushort tid [[thread_index_in_threadgroup]],
                        ushort sg [[simdgroup_index_in_threadgroup]],
                        ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup float part[8];
    if (row % p.m >= p.valid) {
        return;
    }
    device float* r = s + row * p.ld;
    uint n = p.n;
    if (p.use_vis != 0) {
        n = uint(clamp(vis[p.row0 + row % p.m], 0, int(p.n)));
    }
    float m = -FLT_MAX; // finite: no kernel relies on infinities (docs/METAL.md, "One math mode")
    for (uint i = tid; i < n; i += 256) {
        m = max(m, r[i]);
    }
    m = ot_reduce(m, part, sg, lane, true);
    float sum = 0.0f;
    for (uint i = tid; i < n; i += 256) {
        const float e = exp(r[i] - m);
        r[i] = e;
        sum += e;
    }
    sum = ot_reduce(sum, part, sg, lane, false);
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (uint i = tid; i < p.n; i += 256) {
        r[i] = i < n ? r[i] * inv : 0.0f;
    }
}

kernel void ops_rownorm(device const float* x [[buffer(0)]],
                        device const float* w [[buffer(1)]],
                        device const float* b [[buffer(2)]],
                        device float* y [[buffer(3)]],
                        constant RowNormParams& p [[buffer(4)]],
                        uint row [[threadgroup_position_in_grid]],
                        ushort tid [[thread_index_in_threadgroup]],
                        ushort sg [[simdgroup_index_in_threadgroup]],
                        ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup float part[8];
    device const float* xr = x + row * p.cols;
    device float* yr = y + row * p.cols;
    float mean = 0.0f;
    if (p.mode == 1) {
        float s = 0.0f;
        for (uint i = tid; i < p.cols; i += 256) {
            s += xr[i];
        }
        mean = ot_reduce(s, part, sg, lane, false) / float(p.cols);
    }
    float q = 0.0f;
    for (uint i = tid; i < p.cols; i += 256) {
        const float d = xr[i] - mean;
        q += d * d;
    }
    const float inv = rsqrt(ot_reduce(q, part, sg, lane, false) / float(p.cols) + p.eps);
    for (uint i = tid; i < p.cols; i += 256) {
        float v = (xr[i] - mean) * inv;
        if (p.has_w != 0) {
            v *= p.zero_centred != 0 ? w[i] + 1.0f : w[i];
        }
        if (p.has_b != 0) {
            v += b[i];
        }
        yr[i] = v;
    }
}

kernel void ops_headrope(device float* x [[buffer(0)]],
                         device const float* w [[buffer(1)]],
                         device const float* cs [[buffer(2)]],
                         device const float* sn [[buffer(3)]],
                         constant HeadParams& p [[buffer(4)]],
                         uint gid [[thread_position_in_grid]])
{
    if (gid >= p.rows * p.heads) {
        return;
    }
    const uint row = gid / p.heads;
    device float* v = x + gid * p.hd;
    if (p.has_w != 0) {
        float q = 0.0f;
        for (uint i = 0; i < p.hd; ++i) {
            q += v[i] * v[i];
        }
        const float inv = rsqrt(q / float(p.hd) + p.eps);
        for (uint i = 0; i < p.hd; ++i) {
            v[i] = v[i] * inv * w[i];
        }
    }
    if (p.has_rope == 0) {
        return;
    }
    const uint half_d = p.hd / 2;
    device const float* c = cs + row * half_d;
    device const float* s = sn + row * half_d;
    for (uint i = 0; i < half_d; ++i) {
        const uint ia = p.split != 0 ? i : 2 * i;
        const uint ib = p.split != 0 ? i + half_d : 2 * i + 1;
        const float a = v[ia];
        const float b = v[ib];
        v[ia] = a * c[i] - b * s[i];
        v[ib] = b * c[i] + a * s[i];
    }
}
