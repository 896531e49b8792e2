// qi_fragprobe: reports where simdgroup_matrix load/store put each element, so the backend can
// refuse to run if the GPU's 8x8 fragment layout is not the one the GEMM and flash epilogues
// assume (they address thread_elements() directly).
//
// Dispatch: 1 threadgroup of 32 threads. buffer(0): float out[192].
//   out[4l+0], out[4l+1]  the two elements lane l holds after simdgroup_load of M[r][c] = 8r + c
//   out[4l+2], out[4l+3]  the same two elements as the assumed layout places them:
//                         row = 4*((l>>4)&1) + ((l>>1)&3), col = 4*((l>>3)&1) + 2*(l&1), col+1
//   out[128 + 8r + c]     after each lane sets its elements to 2l+0 and 2l+1 and simdgroup_store:
//                         which lane/element the store wrote to (r, c)
// The layout holds when out[4l] == out[4l+2] and out[4l+1] == out[4l+3] for every lane and the
// stored table matches too; kernels.CheckFragLayout (Go) performs the whole check.
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;

kernel void qi_fragprobe(device float* out [[buffer(0)]],
                         ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup float m[64];
    threadgroup float stored[64];
    for (ushort i = lane; i < 64; i += 32) {
        m[i] = float(i);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    simdgroup_float8x8 a;
    simdgroup_load(a, m, 8);
    const ushort row = 4 * ((lane >> 4) & 1) + ((lane >> 1) & 3);
    const ushort col = 4 * ((lane >> 3) & 1) + 2 * (lane & 1);
    out[4 * lane + 0] = a.thread_elements()[0];
    out[4 * lane + 1] = a.thread_elements()[1];
    out[4 * lane + 2] = float(8 * row + col);
    out[4 * lane + 3] = float(8 * row + col + 1);

    simdgroup_float8x8 b;
    b.thread_elements()[0] = float(2 * lane);
    b.thread_elements()[1] = float(2 * lane + 1);
    simdgroup_store(b, stored, 8);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (ushort i = lane; i < 64; i += 32) {
        out[128 + i] = stored[i];
    }
}
