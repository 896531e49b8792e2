// Variants of flash.metal's qi_flash for the autotuner to choose from on the user's Mac
// (docs/METAL.md §7). Same buffers, FlashParams, dispatch (ceil(nq/64), heads) × 256 threads and
// visibility rules as qi_flash, which stays the baseline; see flash.metal for the algorithm.
//
//   qi_flash_st    staging rewrite: a staged key row's source (prefix cache, own panel row, or
//                  none) is chosen once per row segment instead of per element, 16-byte loads and
//                  stores, rows padded to FV_LD = 136 halves (the 256-byte pitch put the 8 rows of
//                  every fragment on one bank offset), and block b+1's K and V loaded into
//                  registers before block b's multiply-accumulates so their latency overlaps them.
//                  Same blocks, same arithmetic: the baseline's output bit for bit.
//   qi_flash_k64   64-key blocks (half the barriers and softmax rescalings per key) in the same
//                  17 KiB: K is staged, S = Q·Kᵀ computed (V's loads issued meanwhile), then V
//                  replaces K in the same rows. Another block size changes the online softmax's
//                  rounding, so it matches the baseline within the attention test's bound.
//
// Requirements on top of flash.metal's: h and ldp multiples of 8, and the panel and prefix
// buffers bound at 16-byte aligned offsets (16-byte loads); kernels.FlashVariants states them.
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;
#include "flashparams.h"

constant constexpr uint FV_HD = 128;          // head dimension
constant constexpr uint FV_BQ = 64;           // queries per threadgroup
constant constexpr uint FV_LD = FV_HD + 8;    // padded staged row, in halves (272 bytes)
constant constexpr float FV_MASKED = -2.0e30f;
constant constexpr float FV_M_INIT = -1.0e30f;

static_assert(FV_LD % 8 == 0, "the staged tile is declared as 16-byte words (it is stored to as uint4)");
static_assert(FV_BQ * FV_LD * 2 + 8 <= 32768, "the padded Q tile exceeds 32 KiB of threadgroup memory");
static_assert(2 * 32 * FV_LD * 2 <= FV_BQ * FV_LD * 2, "32-key K and V blocks must fit in the Q tile's rows");
static_assert(64 * FV_LD * 2 <= FV_BQ * FV_LD * 2, "a 64-key block must fit in the Q tile's rows");

// Visible keys of query row qi (0 when qi is past nq).
METAL_FUNC uint fv_limit(constant FlashParams& p, device const uint* vis, uint qi)
{
    const uint n_keys = p.n_pre + p.n_own;
    if (qi >= p.nq) {
        return 0;
    }
    return p.use_vis != 0 ? min(n_keys, p.n_pre + vis[p.q_row0 + qi]) : n_keys;
}

// Keys any query of the threadgroup sees (threads 0..63 reduce; the result is read after the
// next barrier).
METAL_FUNC void fv_key_limit(threadgroup uint* key_limit, constant FlashParams& p, device const uint* vis,
                             uint q0, ushort tid, ushort lane)
{
    if (tid < FV_BQ) {
        const uint lim = simd_max(fv_limit(p, vis, q0 + tid));
        if (lane == 0) {
            key_limit[tid / 32] = lim;
        }
    }
}

// Stages the Q tile (zeros past nq) into tile[64][FV_LD]: thread tid copies 32 halves of row tid/4.
METAL_FUNC void fv_stage_q(threadgroup half* tile, device const half* panel, constant FlashParams& p, uint q0, uint head, ushort tid)
{
    const uint r = tid / 4;
    const uint c = (tid % 4) * 32;
    threadgroup uint4* dst = (threadgroup uint4*)(tile + r * FV_LD + c);
    device const uint4* src = (device const uint4*)(panel + (p.q_row0 + q0 + r) * p.ldp + head + c);
    const bool valid = q0 + r < p.nq;
    for (uint i = 0; i < 4; ++i) {
        dst[i] = valid ? src[i] : uint4(0u);
    }
}

// W 16-byte words of key j's K (or V: v set) row, from column c of the head: the prefix cache
// for j < n_pre, the own panel row j − n_pre below n_pre + n_own, zeros past them.
template <uint W>
struct fv_row {
    uint4 w[W];
};

template <uint W>
METAL_FUNC fv_row<W> fv_load(device const half* panel, device const half* pkv, constant FlashParams& p,
                             uint head, uint j, uint c, bool v)
{
    fv_row<W> r;
    device const half* src = panel;
    bool valid = true;
    if (j < p.n_pre) {
        src = pkv + j * 2 * p.h + head + c;
    } else if (j < p.n_pre + p.n_own) {
        src = panel + (j - p.n_pre) * p.ldp + p.h + head + c;
    } else {
        valid = false;
    }
    if (v) {
        src += p.h;
    }
    device const uint4* s4 = (device const uint4*)src;
    for (uint i = 0; i < W; ++i) {
        r.w[i] = valid ? s4[i] : uint4(0u);
    }
    return r;
}

template <uint W>
METAL_FUNC void fv_store(threadgroup half* dst, fv_row<W> r)
{
    threadgroup uint4* d4 = (threadgroup uint4*)dst;
    for (uint i = 0; i < W; ++i) {
        d4[i] = r.w[i];
    }
}

// S = Q · Kᵀ for NC chunks of 8 staged keys.
template <uint NC>
METAL_FUNC void fv_scores(thread simdgroup_float8x8 s[NC], thread simdgroup_half8x8 qf[FV_HD / 8], threadgroup const half* ks)
{
    for (uint c = 0; c < NC; ++c) {
        s[c] = make_filled_simdgroup_matrix<float, 8>(0.0f);
        for (uint d = 0; d < FV_HD / 8; ++d) {
            simdgroup_half8x8 kt;
            simdgroup_load(kt, ks + 8 * c * FV_LD + 8 * d, FV_LD, ulong2(0, 0), true);
            simdgroup_multiply_accumulate(s[c], qf[d], kt, s[c]);
        }
    }
}

// The online softmax over one block of NC·8 keys from k0: masks keys ≥ my_limit, updates the
// row's running max m and sum l, writes P = 2^(s − m) as half, and returns the factor the
// accumulated output must be rescaled by.
template <uint NC>
METAL_FUNC float fv_softmax(thread simdgroup_float8x8 s[NC], thread simdgroup_half8x8 pf[NC], uint k0, uint fc,
                            uint my_limit, thread float& m, thread float& l)
{
    float bmax = FV_MASKED;
    for (uint c = 0; c < NC; ++c) {
        for (uint e = 0; e < 2; ++e) {
            float v = s[c].thread_elements()[e];
            if (k0 + 8 * c + fc + e >= my_limit) {
                v = FV_MASKED;
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
    for (uint c = 0; c < NC; ++c) {
        for (uint e = 0; e < 2; ++e) {
            const float pv = exp2(s[c].thread_elements()[e] - m);
            bsum += pv;
            pf[c].thread_elements()[e] = half(pv);
        }
    }
    bsum += simd_shuffle_xor(bsum, ushort(1));
    bsum += simd_shuffle_xor(bsum, ushort(8));
    l = l * correction + bsum;
    return correction;
}

// O = O · correction + P · V over NC chunks of 8 staged keys.
template <uint NC>
METAL_FUNC void fv_pv(thread simdgroup_float8x8 o[FV_HD / 8], thread simdgroup_half8x8 pf[NC], threadgroup const half* vs, float correction)
{
    for (uint j = 0; j < FV_HD / 8; ++j) {
        o[j].thread_elements()[0] *= correction;
        o[j].thread_elements()[1] *= correction;
        for (uint c = 0; c < NC; ++c) {
            simdgroup_half8x8 vf;
            simdgroup_load(vf, vs + 8 * c * FV_LD + 8 * j, FV_LD);
            simdgroup_multiply_accumulate(o[j], pf[c], vf, o[j]);
        }
    }
}

// Writes the lane's output elements of query qi: O / l · oscale.
METAL_FUNC void fv_write(thread simdgroup_float8x8 o[FV_HD / 8], device half* out, constant FlashParams& p,
                         uint qi, uint head, uint fc, float l)
{
    if (qi >= p.nq) {
        return;
    }
    const float inv = l > 0.0f ? p.oscale / l : 0.0f;
    device half* dst = out + (p.q_row0 + qi) * p.ldo + head + fc;
    for (uint j = 0; j < FV_HD / 8; ++j) {
        dst[8 * j] = half(o[j].thread_elements()[0] * inv);
        dst[8 * j + 1] = half(o[j].thread_elements()[1] * inv);
    }
}

kernel void qi_flash_st(device const half* panel [[buffer(0)]],
                        device half* out [[buffer(1)]],
                        device const half* pkv [[buffer(2)]],
                        device const uint* vis [[buffer(3)]],
                        constant FlashParams& p [[buffer(4)]],
                        uint2 tg [[threadgroup_position_in_grid]],
                        ushort tid [[thread_index_in_threadgroup]],
                        ushort sg [[simdgroup_index_in_threadgroup]],
                        ushort lane [[thread_index_in_simdgroup]])
{
    constexpr uint BK = 32;
    threadgroup uint4 tile_words[(FV_BQ * FV_LD) / 8];  // Q tile, then the K block (32 rows) and the V block (16-byte words: stored to as uint4)
    threadgroup half* tile = (threadgroup half*)tile_words;
    threadgroup uint key_limit[2];
    threadgroup half* ks = tile;
    threadgroup half* vs = tile + BK * FV_LD;

    const uint q0 = tg.x * FV_BQ;
    const uint head = tg.y * FV_HD;
    fv_key_limit(key_limit, p, vis, q0, tid, lane);
    fv_stage_q(tile, panel, p, q0, head, tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint keys_seen = max(key_limit[0], key_limit[1]);
    simdgroup_half8x8 qf[FV_HD / 8];
    for (uint d = 0; d < FV_HD / 8; ++d) {
        simdgroup_load(qf[d], tile + 8 * sg * FV_LD + 8 * d, FV_LD);
    }
    const uint fr = 4 * ((lane >> 4) & 1) + ((lane >> 1) & 3);
    const uint fc = 4 * ((lane >> 3) & 1) + 2 * (lane & 1);
    const uint qi = q0 + 8 * sg + fr;
    const uint my_limit = fv_limit(p, vis, qi);

    simdgroup_float8x8 o[FV_HD / 8];
    for (uint j = 0; j < FV_HD / 8; ++j) {
        o[j] = make_filled_simdgroup_matrix<float, 8>(0.0f);
    }
    float m = FV_M_INIT;
    float l = 0.0f;

    // Thread tid stages 16 halves (two 16-byte words) of key row tid/8 of K and of V.
    const uint sr = tid / 8;
    const uint sc = (tid % 8) * 16;
    fv_row<2> kr = fv_load<2>(panel, pkv, p, head, sr, sc, false);
    fv_row<2> vr = fv_load<2>(panel, pkv, p, head, sr, sc, true);
    for (uint k0 = 0; k0 < keys_seen; k0 += BK) {
        threadgroup_barrier(mem_flags::mem_threadgroup);   // everyone is done with Q / the last block
        fv_store<2>(ks + sr * FV_LD + sc, kr);
        fv_store<2>(vs + sr * FV_LD + sc, vr);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (k0 + BK < keys_seen) {
            kr = fv_load<2>(panel, pkv, p, head, k0 + BK + sr, sc, false);
            vr = fv_load<2>(panel, pkv, p, head, k0 + BK + sr, sc, true);
        }
        simdgroup_float8x8 s[BK / 8];
        simdgroup_half8x8 pf[BK / 8];
        fv_scores<BK / 8>(s, qf, ks);
        const float correction = fv_softmax<BK / 8>(s, pf, k0, fc, my_limit, m, l);
        fv_pv<BK / 8>(o, pf, vs, correction);
    }
    fv_write(o, out, p, qi, head, fc, l);
}

kernel void qi_flash_k64(device const half* panel [[buffer(0)]],
                         device half* out [[buffer(1)]],
                         device const half* pkv [[buffer(2)]],
                         device const uint* vis [[buffer(3)]],
                         constant FlashParams& p [[buffer(4)]],
                         uint2 tg [[threadgroup_position_in_grid]],
                         ushort tid [[thread_index_in_threadgroup]],
                         ushort sg [[simdgroup_index_in_threadgroup]],
                         ushort lane [[thread_index_in_simdgroup]])
{
    constexpr uint BK = 64;
    threadgroup uint4 tile_words[(FV_BQ * FV_LD) / 8];  // Q tile, then per block K (64 rows), then V in its place (16-byte words: stored to as uint4)
    threadgroup half* tile = (threadgroup half*)tile_words;
    threadgroup uint key_limit[2];

    const uint q0 = tg.x * FV_BQ;
    const uint head = tg.y * FV_HD;
    fv_key_limit(key_limit, p, vis, q0, tid, lane);
    fv_stage_q(tile, panel, p, q0, head, tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint keys_seen = max(key_limit[0], key_limit[1]);
    simdgroup_half8x8 qf[FV_HD / 8];
    for (uint d = 0; d < FV_HD / 8; ++d) {
        simdgroup_load(qf[d], tile + 8 * sg * FV_LD + 8 * d, FV_LD);
    }
    const uint fr = 4 * ((lane >> 4) & 1) + ((lane >> 1) & 3);
    const uint fc = 4 * ((lane >> 3) & 1) + 2 * (lane & 1);
    const uint qi = q0 + 8 * sg + fr;
    const uint my_limit = fv_limit(p, vis, qi);

    simdgroup_float8x8 o[FV_HD / 8];
    for (uint j = 0; j < FV_HD / 8; ++j) {
        o[j] = make_filled_simdgroup_matrix<float, 8>(0.0f);
    }
    float m = FV_M_INIT;
    float l = 0.0f;

    // Thread tid stages 32 halves (four 16-byte words) of key row tid/4.
    const uint sr = tid / 4;
    const uint sc = (tid % 4) * 32;
    threadgroup half* mine = tile + sr * FV_LD + sc;
    for (uint k0 = 0; k0 < keys_seen; k0 += BK) {
        fv_row<4> kr = fv_load<4>(panel, pkv, p, head, k0 + sr, sc, false);
        threadgroup_barrier(mem_flags::mem_threadgroup);   // everyone is done with Q / the last V
        fv_store<4>(mine, kr);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        fv_row<4> vr = fv_load<4>(panel, pkv, p, head, k0 + sr, sc, true);
        simdgroup_float8x8 s[BK / 8];
        simdgroup_half8x8 pf[BK / 8];
        fv_scores<BK / 8>(s, qf, tile);
        const float correction = fv_softmax<BK / 8>(s, pf, k0, fc, my_limit, m, l);
        threadgroup_barrier(mem_flags::mem_threadgroup);   // everyone is done with K
        fv_store<4>(mine, vr);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        fv_pv<BK / 8>(o, pf, tile, correction);
    }
    fv_write(o, out, p, qi, head, fc, l);
}
