// qi_amax: the largest |value| of n halves, folded into amax[slot] (float bits kept as a uint so
// an atomic max orders them: non-negative floats compare like their bit patterns). Diagnostics
// for the power-of-two guards of the half sites (CMF_QI21_AMAX in the seed).
//
// Dispatch: threadgroups (G, 1, 1), 256 threads, any G (threads stride over the data).
// Buffers: 0 data (half), 1 amax (uint slots, zero before the first fold), 2 count n (uint),
//          3 slot (uint).
#include <metal_stdlib>
using namespace metal;

kernel void qi_amax(device const half* data [[buffer(0)]],
                    device atomic_uint* amax [[buffer(1)]],
                    constant uint& n [[buffer(2)]],
                    constant uint& slot [[buffer(3)]],
                    uint gid [[thread_position_in_grid]],
                    uint threads [[threads_per_grid]],
                    ushort lane [[thread_index_in_simdgroup]])
{
    float m = 0.0f;
    for (uint i = gid; i < n; i += threads) {
        m = max(m, fabs(float(data[i])));
    }
    m = simd_max(m);
    if (lane == 0) {
        atomic_fetch_max_explicit(&amax[slot], as_type<uint>(m), memory_order_relaxed);
    }
}
