// qi_rowop: the per-row operations between a block's GEMMs, on the f32 residual stream x.
//   mode bit 0: x += tanh(gate) · y                      (gated residual; gate, y as given)
//   mode bit 1: xn = half(LN(x) · (1 + scale) · oscale)  (modulated LayerNorm, no affine:
//               LN(x) = (x − mean) / sqrt(var + eps), biased variance over the row)
// With both bits the residual update comes first and the norm reads the updated row.
//
// Dispatch: threadgroups (rows, 1, 1), 256 threads; threadgroup g handles row row0 + g.
// Buffers: 0 x (float, [rows][h]), 1 y (float, [rows][h]), 2 xn (half, [rows][h]),
//          3 gate (float [h], bit 0), 4 scale (float [h], bit 1), 5 RowParams.
// Requirement: h % 256 == 0 is not needed; any h works (threads stride over the row).
#include <metal_stdlib>
using namespace metal;

struct RowParams {
    uint h;        // row length
    uint row0;     // first row
    uint mode;     // bit 0: gated residual, bit 1: modulated LayerNorm
    float eps;     // LayerNorm epsilon
    float oscale;  // applied to xn
    uint pad0;
    uint pad1;
    uint pad2;
};

constant constexpr uint RO_THREADS = 256;

// Sum of v over the threadgroup's 256 threads (8 simdgroups), returned to every thread.
static float rowop_sum(float v, threadgroup float* partial, ushort sg, ushort lane)
{
    v = simd_sum(v);
    if (lane == 0) {
        partial[sg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float total = 0.0f;
    for (uint i = 0; i < RO_THREADS / 32; ++i) {
        total += partial[i];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);   // partial is reused by the next sum
    return total;
}

kernel void qi_rowop(device float* x [[buffer(0)]],
                     device const float* y [[buffer(1)]],
                     device half* xn [[buffer(2)]],
                     device const float* gate [[buffer(3)]],
                     device const float* scale [[buffer(4)]],
                     constant RowParams& p [[buffer(5)]],
                     uint g [[threadgroup_position_in_grid]],
                     ushort tid [[thread_index_in_threadgroup]],
                     ushort sg [[simdgroup_index_in_threadgroup]],
                     ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup float partial[RO_THREADS / 32];
    const uint row = p.row0 + g;
    device float* xr = x + row * p.h;
    if ((p.mode & 1) != 0) {
        device const float* yr = y + row * p.h;
        for (uint i = tid; i < p.h; i += RO_THREADS) {
            xr[i] = xr[i] + tanh(gate[i]) * yr[i];
        }
    }
    if ((p.mode & 2) == 0) {
        return;
    }
    float s = 0.0f;
    for (uint i = tid; i < p.h; i += RO_THREADS) {
        s += xr[i];
    }
    const float mean = rowop_sum(s, partial, sg, lane) / float(p.h);
    float q = 0.0f;
    for (uint i = tid; i < p.h; i += RO_THREADS) {
        const float d = xr[i] - mean;
        q += d * d;
    }
    const float inv = rsqrt(rowop_sum(q, partial, sg, lane) / float(p.h) + p.eps);
    device half* out = xn + row * p.h;
    for (uint i = tid; i < p.h; i += RO_THREADS) {
        out[i] = half((xr[i] - mean) * inv * (1.0f + scale[i]) * p.oscale);
    }
}
