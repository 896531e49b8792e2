// qi_qkrope: in place on the qkv panel, per row and head: RMSNorm over the head's 128 channels
// (x · rsqrt(mean(x²) + eps) · weight, weights norm_q for q heads and norm_k for k heads), then
// interleaved-pair RoPE (x'[2p] = a·cos_p − b·sin_p, x'[2p+1] = a·sin_p + b·cos_p, p = 0..63,
// a = x[2p], b = x[2p+1]), then q heads are multiplied by qmul (log2(e)/sqrt(128), so qi_flash
// can use exp2). v is untouched. Math in float, stored back as half.
//
// Dispatch: threadgroups (rows, ceil(2·nh / 4), 1), 128 threads: simdgroup s handles "head"
// 4·y + s of row row0 + x, where heads 0..nh are q and nh..2nh are k; lane l owns channels
// 4l .. 4l+3 (pairs 2l, 2l+1).
// Buffers: 0 panel (half, row stride ldp; q at column 0, k at column h), 1 norm_q (float[128]),
//          2 norm_k (float[128]), 3 cos, 4 sin (float, [rope rows][64], row rope0 + x),
//          5 QkParams.
#include <metal_stdlib>
using namespace metal;

struct QkParams {
    uint h;       // model width = nh · 128
    uint nh;      // heads
    uint ldp;     // panel row stride in elements
    uint row0;    // first panel row
    uint rope0;   // rope table row of panel row row0
    float eps;    // RMSNorm epsilon
    float qmul;   // applied to q after RoPE
    uint pad0;
};

kernel void qi_qkrope(device half* panel [[buffer(0)]],
                      device const float* norm_q [[buffer(1)]],
                      device const float* norm_k [[buffer(2)]],
                      device const float* rope_cos [[buffer(3)]],
                      device const float* rope_sin [[buffer(4)]],
                      constant QkParams& p [[buffer(5)]],
                      uint2 tg [[threadgroup_position_in_grid]],
                      ushort sg [[simdgroup_index_in_threadgroup]],
                      ushort lane [[thread_index_in_simdgroup]])
{
    const uint head = 4 * tg.y + sg;
    if (head >= 2 * p.nh) {
        return;   // whole simdgroup: no SIMD operation is left unmatched
    }
    const bool is_q = head < p.nh;
    device half* v = panel + (p.row0 + tg.x) * p.ldp + (is_q ? 0 : p.h) + (head % p.nh) * 128 + 4 * lane;
    device const float* w = (is_q ? norm_q : norm_k) + 4 * lane;
    device const float* cs = rope_cos + (p.rope0 + tg.x) * 64 + 2 * lane;
    device const float* sn = rope_sin + (p.rope0 + tg.x) * 64 + 2 * lane;

    float x[4];
    float ss = 0.0f;
    for (uint i = 0; i < 4; ++i) {
        x[i] = float(v[i]);
        ss += x[i] * x[i];
    }
    const float inv = rsqrt(simd_sum(ss) / 128.0f + p.eps);
    for (uint i = 0; i < 4; ++i) {
        x[i] = x[i] * inv * w[i];
    }
    const float mul = is_q ? p.qmul : 1.0f;
    for (uint k = 0; k < 2; ++k) {
        const float a = x[2 * k];
        const float b = x[2 * k + 1];
        v[2 * k] = half((a * cs[k] - b * sn[k]) * mul);
        v[2 * k + 1] = half((a * sn[k] + b * cs[k]) * mul);
    }
}
