// qi_kvcopy: keeps a prefill layer's keys and values: for r = 0 .. n, pkv row r = [panel row
// row0 + r's k (h halves) | its v (h halves)], the layout qi_flash reads as prefix K/V.
//
// Dispatch: threadgroups (ceil(2h / 8 / 64), ceil(n / 4), 1), 64×4 threads; thread (x, y) copies
// 8 consecutive halves (a 16-byte chunk) of row y. Threads past the rows or the width do nothing.
// Buffers: 0 panel (half, row stride ldp; k at column h, v at column 2h), 1 pkv (half, [n][2h]),
//          2 KvParams. Requirement: h % 8 == 0.
#include <metal_stdlib>
using namespace metal;

struct KvParams {
    uint h;      // model width
    uint row0;   // first panel row
    uint n;      // rows to copy
    uint ldp;    // panel row stride in elements
};

kernel void qi_kvcopy(device const half* panel [[buffer(0)]],
                      device half* pkv [[buffer(1)]],
                      constant KvParams& p [[buffer(2)]],
                      uint2 gid [[thread_position_in_grid]])
{
    const uint chunk = gid.x;
    const uint r = gid.y;
    if (r >= p.n || chunk >= 2 * p.h / 8) {
        return;
    }
    device const half* src = panel + (p.row0 + r) * p.ldp + p.h + 8 * chunk;
    device half* dst = pkv + r * 2 * p.h + 8 * chunk;
    for (uint i = 0; i < 8; ++i) {
        dst[i] = src[i];
    }
}
