// qi_embed: the step's input projection of latent tokens: x[t][o] = b[o] + Σ_c xtok[t][c]·W[o][c]
// (img_in: Linear(64 → h) with bias), in float.
//
// Dispatch: threadgroups (ceil(h / 256), n, 1), 256 threads; thread (o, t) computes x[t][o].
// Buffers: 0 xtok (float, [n][64]), 1 img_in (float: W [h][64], then b [h]), 2 x (float,
//          [n][h]), 3 EmbedParams.
#include <metal_stdlib>
using namespace metal;

struct EmbedParams {
    uint h;   // model width
    uint n;   // tokens
    uint pad0;
    uint pad1;
};

kernel void qi_embed(device const float* xtok [[buffer(0)]],
                     device const float* img_in [[buffer(1)]],
                     device float* x [[buffer(2)]],
                     constant EmbedParams& p [[buffer(3)]],
                     uint2 gid [[thread_position_in_grid]])
{
    const uint o = gid.x;
    const uint t = gid.y;
    if (o >= p.h || t >= p.n) {
        return;
    }
    device const float* w = img_in + o * 64;
    device const float* in = xtok + t * 64;
    float acc = img_in[p.h * 64 + o];
    for (uint c = 0; c < 64; ++c) {
        acc = fma(in[c], w[c], acc);
    }
    x[t * p.h + o] = acc;
}
