// Kernels that exercise the emulator itself (kernels/emu tests), not part of the app.
#include <metal_stdlib>
using namespace metal;

struct Dims {
    uint n;
    float scale;
};

// out[i] = simd_sum over the simdgroup of in[i], then scaled; uses a threadgroup(0) scratch to
// reverse each threadgroup's values across a barrier.
kernel void simd_and_barrier(device const float* in [[buffer(0)]],
                             device float* sums [[buffer(1)]],
                             device float* reversed [[buffer(2)]],
                             device uint* xor_lane [[buffer(3)]],
                             constant Dims& dims [[buffer(4)]],
                             threadgroup float* scratch [[threadgroup(0)]],
                             uint gid [[thread_position_in_grid]],
                             uint tid [[thread_index_in_threadgroup]],
                             uint tpg [[threads_per_threadgroup]],
                             ushort lane [[thread_index_in_simdgroup]])
{
    const float v = gid < dims.n ? in[gid] : 0.0f;
    const float s = simd_sum(v);
    scratch[tid] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (gid < dims.n) {
        sums[gid] = s * dims.scale;
        reversed[gid] = scratch[tpg - 1 - tid];
        xor_lane[gid] = simd_shuffle_xor(uint(lane), ushort(5));
    }
}

// Each thread writes its value, then reads its neighbour's without a barrier: a race that the
// fiber scheduler exposes deterministically (reverse order reads stale threadgroup memory).
kernel void missing_barrier(device float* out [[buffer(0)]],
                            uint tid [[thread_index_in_threadgroup]])
{
    threadgroup float t[64];
    t[tid] = float(tid);
    out[tid] = t[(tid + 1) % 64];
}

// half arithmetic rounds every operation to half: (a*b)+c on half scalars and half4 vectors.
kernel void half_ops(device const half* a [[buffer(0)]],
                     device half* out [[buffer(1)]],
                     uint i [[thread_position_in_grid]])
{
    const half x = a[3 * i];
    const half y = a[3 * i + 1];
    const half z = a[3 * i + 2];
    out[2 * i] = x * y + z;
    half4 v = half4(x, y, z, x);
    half4 w = v * y + half4(z);
    out[2 * i + 1] = half(w.x);
}

// One multiply-accumulate per threadgroup: out[g] block = A_g · B_g + I, with A_g = (g+1)·ones and
// B = ones, so every element is 8·(g+1) + (r == c). Checks that results never leak between groups.
kernel void one_mma_per_group(device float* out [[buffer(0)]],
                              uint g [[threadgroup_position_in_grid]])
{
    simdgroup_float8x8 a = make_filled_simdgroup_matrix<float, 8>(float(g + 1));
    simdgroup_float8x8 b = make_filled_simdgroup_matrix<float, 8>(1.0f);
    simdgroup_float8x8 c = simdgroup_float8x8(1.0f);
    simdgroup_float8x8 d;
    simdgroup_multiply_accumulate(d, a, b, c);
    simdgroup_store(d, out + 64 * g, 8);
}

// Writes count floats from out[0]: past the end of a shorter buffer (the guard page test).
kernel void write_floats(device float* out [[buffer(0)]],
                         constant uint& count [[buffer(1)]],
                         uint i [[thread_position_in_grid]])
{
    if (i == 0) {
        for (uint k = 0; k < count; ++k) {
            out[k] = 1.0f;
        }
    }
}

// For dispatchThreads: every thread of the grid reports its group's size, its index in the
// group and how many lanes its simdgroup has (simd_sum of 1).
kernel void grid_probe(device uint* out [[buffer(0)]],
                       uint2 pos [[thread_position_in_grid]],
                       uint2 grid [[threads_per_grid]],
                       uint2 tptg [[threads_per_threadgroup]],
                       uint tid [[thread_index_in_threadgroup]])
{
    const uint lanes = simd_sum(1u);
    device uint* o = out + 5 * (pos.y * grid.x + pos.x);
    o[0] = tptg.x;
    o[1] = tptg.y;
    o[2] = tid;
    o[3] = lanes;
    o[4] = grid.x * 1000 + grid.y;
}

// Thread 1 needs more stack (80 KiB) than the emulator's 64 KiB fibers (the stack guard test):
// without a guard page its array would silently overlap thread 0's stack.
kernel void deep_stack(device float* out [[buffer(0)]],
                       constant uint& n [[buffer(1)]],
                       uint i [[thread_position_in_grid]])
{
    float big[20480];
    if (i == 1) {
        for (uint k = 0; k < n; ++k) {
            big[k] = float(k);
        }
        out[i] = big[n / 2];
    }
}
