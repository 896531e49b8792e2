// qi_final: the denoiser's output head on the residual stream: per row,
//   y = LN(x) · fs          (LN without affine, biased variance, eps; fs = 1 + norm_out scale)
//   out[t][c] = pb[c] + Σ_o y[o] · P[c][o]     (proj_out: Linear(h → 64) with bias)
// in float.
//
// Dispatch: threadgroups (rows, 1, 1), 256 threads; threadgroup g handles x row row0 + g and
// writes out row g. Simdgroup s computes outputs c = 8s .. 8s+8, each a simd_sum over o.
// Buffers: 0 x (float, [rows][h]), 1 fs (float [h]), 2 proj_out (float: P [64][h], then pb [64]),
//          3 out (float, [rows][64]), 4 FinalParams. Requirement: h ≤ 4096.
#include <metal_stdlib>
using namespace metal;

struct FinalParams {
    uint h;      // model width
    uint row0;   // first x row
    float eps;   // LayerNorm epsilon
    uint pad0;
};

constant constexpr uint FI_THREADS = 256;
constant constexpr uint FI_MAX_H = 4096;

// Sum of v over the threadgroup's 256 threads, returned to every thread.
static float final_sum(float v, threadgroup float* partial, ushort sg, ushort lane)
{
    v = simd_sum(v);
    if (lane == 0) {
        partial[sg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float total = 0.0f;
    for (uint i = 0; i < FI_THREADS / 32; ++i) {
        total += partial[i];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return total;
}

kernel void qi_final(device const float* x [[buffer(0)]],
                     device const float* fs [[buffer(1)]],
                     device const float* proj [[buffer(2)]],
                     device float* out [[buffer(3)]],
                     constant FinalParams& p [[buffer(4)]],
                     uint g [[threadgroup_position_in_grid]],
                     ushort tid [[thread_index_in_threadgroup]],
                     ushort sg [[simdgroup_index_in_threadgroup]],
                     ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup float partial[FI_THREADS / 32];
    threadgroup float y[FI_MAX_H];
    device const float* xr = x + (p.row0 + g) * p.h;
    float s = 0.0f;
    for (uint i = tid; i < p.h; i += FI_THREADS) {
        s += xr[i];
    }
    const float mean = final_sum(s, partial, sg, lane) / float(p.h);
    float q = 0.0f;
    for (uint i = tid; i < p.h; i += FI_THREADS) {
        const float d = xr[i] - mean;
        q += d * d;
    }
    const float inv = rsqrt(final_sum(q, partial, sg, lane) / float(p.h) + p.eps);
    for (uint i = tid; i < p.h; i += FI_THREADS) {
        y[i] = (xr[i] - mean) * inv * fs[i];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint c = 8 * sg; c < 8 * sg + 8; ++c) {
        device const float* w = proj + c * p.h;
        float acc = 0.0f;
        for (uint i = lane; i < p.h; i += 32) {
            acc = fma(y[i], w[i], acc);
        }
        acc = simd_sum(acc);
        if (lane == 0) {
            out[g * 64 + c] = acc + proj[64 * p.h + c];
        }
    }
}
