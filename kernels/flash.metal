// qi_flash: attention of one head over [prefix K/V | own rows], 32 keys at a time, with an online
// (flash) softmax in base 2 and an optional block-causal visibility.
//
// Inputs are half. The qkv panel holds, per row, q | k | v (each `h` wide, heads of 128
// channels); q is already scaled by log2(e)/sqrt(128) (qi_qkrope does it), so
//   o[i] = oscale · Σ_j 2^(q_i·k_j) v_j / Σ_j 2^(q_i·k_j)      over the keys j query i sees.
// Keys j = 0 .. n_pre + n_own: the first n_pre come from the prefix cache pkv (per row: k then v,
// 2h wide), the rest are panel rows 0 .. n_own. Query i (0 .. nq) is panel row q_row0 + i and
// writes output row q_row0 + i. Without visibility every query sees every key (the target rows
// of a step); with use_vis, query i sees keys j < n_pre + vis[q_row0 + i] (the block-causal
// prefix: a text row sees itself and what precedes it, an image row its whole block).
//
// Dispatch: threadgroups (ceil(nq/64), heads, 1), 256 threads (8 simdgroups). Simdgroup s owns
// queries 8s .. 8s+8 of the threadgroup's 64: Q (8×128) lives in 16 half fragments, S = Q·Kᵀ is
// 4 float fragments per key block, O (8×128) is 16 float fragments. Threadgroup memory: 16 KiB,
// first for the Q tile, then for the K and V blocks. Softmax statistics are per row, reduced over
// the 4 lanes that hold a fragment row (thread_elements layout checked by qi_fragprobe).
//
// Buffers: 0 panel (half), 1 out (half, row stride ldo), 2 pkv (half), 3 vis (uint, use_vis
// only), 4 FlashParams.
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;

#include "flashparams.h"

constant constexpr uint FA_HD = 128;    // head dimension
constant constexpr uint FA_BQ = 64;     // queries per threadgroup
constant constexpr uint FA_BK = 32;     // keys per block
// Masked scores and the initial running max are finite (Metal compiles with fast math, which may
// assume no infinities): a masked score sits below the initial max, so 2^(masked − m) is 0 and a
// block with no visible key leaves m and l unchanged.
constant constexpr float FA_MASKED = -2.0e30f;
constant constexpr float FA_M_INIT = -1.0e30f;

kernel void qi_flash(device const half* panel [[buffer(0)]],
                     device half* out [[buffer(1)]],
                     device const half* pkv [[buffer(2)]],
                     device const uint* vis [[buffer(3)]],
                     constant FlashParams& p [[buffer(4)]],
                     uint2 tg [[threadgroup_position_in_grid]],
                     ushort tid [[thread_index_in_threadgroup]],
                     ushort sg [[simdgroup_index_in_threadgroup]],
                     ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup half tile[FA_BQ * FA_HD];   // Q tile, then K block (first half) and V block
    threadgroup uint key_limit[2];
    threadgroup half* ks = tile;
    threadgroup half* vs = tile + FA_BK * FA_HD;

    const uint q0 = tg.x * FA_BQ;
    const uint head = tg.y * FA_HD;
    const uint n_keys = p.n_pre + p.n_own;

    // Keys any query of this threadgroup sees: blocks past the largest limit are skipped.
    if (tid < FA_BQ) {
        uint lim = 0;
        if (q0 + tid < p.nq) {
            lim = p.use_vis != 0 ? min(n_keys, p.n_pre + vis[p.q_row0 + q0 + tid]) : n_keys;
        }
        lim = simd_max(lim);
        if (lane == 0) {
            key_limit[tid / 32] = lim;
        }
    }
    // Stage Q (zeros past nq) and take it into registers.
    for (uint e = tid; e < FA_BQ * FA_HD; e += 256) {
        const uint r = e / FA_HD;
        const uint c = e % FA_HD;
        tile[e] = q0 + r < p.nq ? panel[(p.q_row0 + q0 + r) * p.ldp + head + c] : half(0.0f);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint keys_seen = max(key_limit[0], key_limit[1]);
    simdgroup_half8x8 qf[FA_HD / 8];
    for (uint d = 0; d < FA_HD / 8; ++d) {
        simdgroup_load(qf[d], tile + 8 * sg * FA_HD + 8 * d, FA_HD);
    }

    // This lane's fragment row and columns (same for every fragment).
    const uint fr = 4 * ((lane >> 4) & 1) + ((lane >> 1) & 3);
    const uint fc = 4 * ((lane >> 3) & 1) + 2 * (lane & 1);
    const uint qi = q0 + 8 * sg + fr;
    const uint my_limit = qi >= p.nq ? 0 : (p.use_vis != 0 ? min(n_keys, p.n_pre + vis[p.q_row0 + qi]) : n_keys);

    simdgroup_float8x8 o[FA_HD / 8];
    for (uint j = 0; j < FA_HD / 8; ++j) {
        o[j] = make_filled_simdgroup_matrix<float, 8>(0.0f);
    }
    float m = FA_M_INIT;  // running max of the row
    float l = 0.0f;       // running sum of 2^(s - m) over the row

    for (uint k0 = 0; k0 < keys_seen; k0 += FA_BK) {
        threadgroup_barrier(mem_flags::mem_threadgroup);   // everyone is done with Q / the last block
        for (uint e = tid; e < FA_BK * FA_HD; e += 256) {
            const uint r = e / FA_HD;
            const uint c = e % FA_HD;
            const uint j = k0 + r;
            half kv = half(0.0f);
            half vv = half(0.0f);
            if (j < p.n_pre) {
                kv = pkv[j * 2 * p.h + head + c];
                vv = pkv[j * 2 * p.h + p.h + head + c];
            } else if (j < n_keys) {
                kv = panel[(j - p.n_pre) * p.ldp + p.h + head + c];
                vv = panel[(j - p.n_pre) * p.ldp + 2 * p.h + head + c];
            }
            ks[e] = kv;
            vs[e] = vv;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        // S = Q · Kᵀ for the block's 4 chunks of 8 keys.
        simdgroup_float8x8 s[FA_BK / 8];
        for (uint c = 0; c < FA_BK / 8; ++c) {
            s[c] = make_filled_simdgroup_matrix<float, 8>(0.0f);
            for (uint d = 0; d < FA_HD / 8; ++d) {
                simdgroup_half8x8 kt;
                simdgroup_load(kt, ks + 8 * c * FA_HD + 8 * d, FA_HD, ulong2(0, 0), true);
                simdgroup_multiply_accumulate(s[c], qf[d], kt, s[c]);
            }
        }
        // Mask and the row's block max over its 8 values in this lane and the 3 other lanes of the row.
        float bmax = FA_MASKED;
        for (uint c = 0; c < FA_BK / 8; ++c) {
            for (uint e = 0; e < 2; ++e) {
                const uint j = k0 + 8 * c + fc + e;
                float v = s[c].thread_elements()[e];
                if (j >= my_limit) {
                    v = FA_MASKED;
                }
                s[c].thread_elements()[e] = v;
                bmax = max(bmax, v);
            }
        }
        bmax = max(bmax, simd_shuffle_xor(bmax, ushort(1)));
        bmax = max(bmax, simd_shuffle_xor(bmax, ushort(8)));
        const float m_new = max(m, bmax);
        const float correction = exp2(m - m_new);
        m = m_new;
        float bsum = 0.0f;
        simdgroup_half8x8 pf[FA_BK / 8];
        for (uint c = 0; c < FA_BK / 8; ++c) {
            for (uint e = 0; e < 2; ++e) {
                const float pv = exp2(s[c].thread_elements()[e] - m);
                bsum += pv;
                pf[c].thread_elements()[e] = half(pv);
            }
        }
        bsum += simd_shuffle_xor(bsum, ushort(1));
        bsum += simd_shuffle_xor(bsum, ushort(8));
        l = l * correction + bsum;

        // O = O · correction + P · V.
        for (uint j = 0; j < FA_HD / 8; ++j) {
            o[j].thread_elements()[0] *= correction;
            o[j].thread_elements()[1] *= correction;
            for (uint c = 0; c < FA_BK / 8; ++c) {
                simdgroup_half8x8 vf;
                simdgroup_load(vf, vs + 8 * c * FA_HD + 8 * j, FA_HD);
                simdgroup_multiply_accumulate(o[j], pf[c], vf, o[j]);
            }
        }
    }

    if (qi < p.nq) {
        const float inv = l > 0.0f ? p.oscale / l : 0.0f;
        device half* dst = out + (p.q_row0 + qi) * p.ldo + head + fc;
        for (uint j = 0; j < FA_HD / 8; ++j) {
            dst[8 * j] = half(o[j].thread_elements()[0] * inv);
            dst[8 * j + 1] = half(o[j].thread_elements()[1] * inv);
        }
    }
}
