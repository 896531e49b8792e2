#include <metal_stdlib>
using namespace metal;

static void store_result(device float* dst, uint i, float v) { dst[i] = v; }

kernel void bad_address_space(device float* out [[buffer(0)]],
                              uint tid [[thread_index_in_threadgroup]])
{
    threadgroup float scratch[64];
    scratch[tid] = float(tid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    store_result(scratch, tid, 1.0f);
    out[tid] = scratch[63 - tid];
}
