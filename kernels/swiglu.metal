// qi_swiglu: h = half(SiLU(g) · u · oscale) elementwise, SiLU(g) = g / (1 + e^−g), over n4
// groups of 4 consecutive elements; g, u and h start at g_off, u_off, h_off (in elements).
//
// Dispatch: threadgroups (ceil(n4 / 256), 1, 1), 256 threads; thread i handles elements 4i..4i+3.
// Buffers: 0 gate|up (float), 1 h (half), 2 SwigluParams.
#include <metal_stdlib>
using namespace metal;

struct SwigluParams {
    uint n4;       // element count / 4
    uint g_off;    // first gate element
    uint u_off;    // first up element
    uint h_off;    // first output element
    float oscale;  // applied to the output
    uint pad0;
    uint pad1;
    uint pad2;
};

kernel void qi_swiglu(device const float* gu [[buffer(0)]],
                      device half* h [[buffer(1)]],
                      constant SwigluParams& p [[buffer(2)]],
                      uint i [[thread_position_in_grid]])
{
    if (i >= p.n4) {
        return;
    }
    for (uint e = 4 * i; e < 4 * i + 4; ++e) {
        const float g = gu[p.g_off + e];
        const float u = gu[p.u_off + e];
        h[p.h_off + e] = half(g / (1.0f + exp(-g)) * u * p.oscale);
    }
}
