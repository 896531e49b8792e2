// The Qwen-Image-2.1 autoencoder's kernels (engine/vae/vaemetal runs the decoder and the encoder
// with them through engine/ml/metalops; the mid-block attention uses ops.metal's). Activations are
// float32, channel-first [C, H, W]; the convolution stages its operands as half in threadgroup
// memory and accumulates in float with simdgroup 8×8 multiply-accumulates (gemmtile.h's tile,
// shared with gemm.metal and ops.metal).
//
//   vae_conv     2-D convolution as an implicit GEMM: y[o, p] = bias[o] + Σ_k W[o, k] · X[k, p]
//                with W [oc, ic·kh·kw] half (the f16 weight read in place) and X the im2col of x
//                gathered on the fly (zero padding, stride 1 or 2).
//                Dispatch: (⌈oh·ow/64⌉, ⌈oc/64⌉) × 128 threads.
//                Buffers: 0 W (half), 1 x (float), 2 y (float), 3 bias (float), 4 ConvParams,
//                5 amax of x (float bits, from vae_amax; read when guard is set).
//   vae_chnorm   the VAE's channel RMS norm: y[c, p] = x[c, p] / sqrt(mean_c x[·, p]² + eps) ·
//                gamma[c]. Dispatch: ⌈pixels/256⌉ × 256 threads.
//                Buffers: 0 x, 1 gamma, 2 y, 3 NormParams.
//   vae_elt      element-wise ops on float: SiLU, a + b, a ⊙ b (b of n elements or one row of bn
//                broadcast), s·a, copy, zero fill, GELU-tanh, SiLU(a) ⊙ b, LeakyReLU with slope s,
//                and PReLU with one slope b[i / bn] per plane of bn elements (engine/ml/metalops
//                uses it for every network). Dispatch: ⌈n/256⌉ × 256 threads.
//                Buffers: 0 a, 1 b, 2 y, 3 EltParams.
//   vae_upsample nearest ×f: y[c, y, x] = x[c, y/f, x/f]. Dispatch: ⌈c·f²·h·w/256⌉ × 256.
//                Buffers: 0 x, 1 y, 2 UpParams.
//   vae_shuffle  pixel shuffle between the large [c, r·h, r·w] and the small [c·r², h, w] layout:
//                large[c, y·r + i, x·r + j] = small[c·r² + i·r + j, y, x], either way (the learned
//                upscalers, engine/upscale). Dispatch: ⌈c·r²·h·w/256⌉ × 256.
//                Buffers: 0 x, 1 y, 2 ShuffleParams.
//   vae_transpose y[c, r] = x[r, c] for x [rows, cols]. Dispatch: (⌈cols/32⌉, ⌈rows/32⌉) × (32, 8).
//                Buffers: 0 x, 1 y, 2 TransposeParams.
//   vae_amax     the largest |x| of n floats, folded into amax[0] as float bits by an atomic max
//                (non-negative floats order like their bits); zero it first. Any grid of 256-thread
//                groups. Buffers: 0 x, 1 amax (uint), 2 n (uint).
//
// The guard: half holds at most 65504, and the convolution's input is not always normalized
// (the residual stream feeds the upsamplers and the shortcuts). With guard set, x is staged as
// half(x · s) with s = 2^−⌈log2(amax / 16384)⌉ when amax > 16384 (else 1) and the accumulator is
// divided by s: exact powers of two, so inputs that fit are staged exactly as without it
// (gemmtile.h's tile_guard_scale, which ops.metal's ops_linear uses too).
//
// Bounds: every size is free (edges are masked); element counts must fit in 32 bits.
// The GEMM epilogues address thread_elements() by the fragment layout qi_fragprobe verifies.
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;
#include "gemmtile.h"

struct ConvParams {
    uint ic;        // input channels
    uint h;         // input height
    uint w;         // input width
    uint oc;        // output channels
    uint oh;        // output height
    uint ow;        // output width
    uint k;         // kernel side (1 or 3)
    uint stride;    // 1 or 2
    uint pad_top;   // zero rows above
    uint pad_left;  // zero columns to the left
    uint has_bias;  // 1: add bias[o]
    uint guard;     // 1: scale x by the power of two tile_guard_scale(amax) while staging it
};

struct NormParams {
    uint c;      // channels
    uint pixels; // H·W
    float eps;
    uint pad0;
};

struct EltParams {
    uint n;     // elements of a and y
    uint bn;    // elements of b (n, or one row that repeats)
    uint op;    // 0 SiLU(a), 1 a + b, 2 a ⊙ b, 3 s·a, 4 copy a, 5 zero, 6 GELU-tanh(a), 7 SiLU(a) ⊙ b,
                // 8 LeakyReLU(a) with slope s, 9 PReLU(a) with slope b[i / bn] (bn: a plane)
    float s;    // scale of op 3, slope of op 8
};

struct UpParams {
    uint c;   // channels
    uint h;   // input height
    uint w;   // input width
    uint f;   // factor
};

struct ShuffleParams {
    uint c;         // channels of the large layout
    uint h;         // height of the small layout
    uint w;         // width of the small layout
    uint r;         // factor
    uint unshuffle; // 0: small → large (pixel_shuffle), 1: large → small (pixel_unshuffle)
    uint pad0;
    uint pad1;
    uint pad2;
};

struct TransposeParams {
    uint rows;
    uint cols;
    uint pad0;
    uint pad1;
};

kernel void vae_amax(device const float* x [[buffer(0)]],
                     device atomic_uint* amax [[buffer(1)]],
                     constant uint& n [[buffer(2)]],
                     uint gid [[thread_position_in_grid]],
                     uint threads [[threads_per_grid]],
                     ushort lane [[thread_index_in_simdgroup]])
{
    float m = 0.0f;
    for (uint i = gid; i < n; i += threads) {
        m = max(m, fabs(x[i]));
    }
    m = simd_max(m);
    if (lane == 0) {
        atomic_fetch_max_explicit(&amax[0], as_type<uint>(m), memory_order_relaxed);
    }
}

kernel void vae_conv(device const half* wt [[buffer(0)]],
                     device const float* x [[buffer(1)]],
                     device float* y [[buffer(2)]],
                     device const float* bias [[buffer(3)]],
                     constant ConvParams& p [[buffer(4)]],
                     device const uint* amax [[buffer(5)]],
                     uint3 tg [[threadgroup_position_in_grid]],
                     ushort tid [[thread_index_in_threadgroup]],
                     ushort sg [[simdgroup_index_in_threadgroup]],
                     ushort lane [[thread_index_in_simdgroup]])
{
    threadgroup uint4 ws_words[(TILE_M * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* ws = (threadgroup half*)ws_words;
    threadgroup uint4 xs_words[(TILE_N * TILE_LD) / 8];  // 16-byte words: stored to as uint4
    threadgroup half* xs = (threadgroup half*)xs_words;
    const uint npix = p.oh * p.ow;
    const uint kk2 = p.k * p.k;
    const uint kdim = p.ic * kk2;
    const uint p0 = tg.x * TILE_N;
    const uint o0 = tg.y * TILE_M;

    // The pixel this thread gathers for: consecutive threads read neighbouring pixels.
    const uint px = p0 + tid % 64;
    const uint kc = (tid / 64) * 16;
    const bool pin = px < npix;
    const int oy = pin ? int(px / p.ow) : 0;
    const int ox = pin ? int(px % p.ow) : 0;
    const int iy0 = oy * int(p.stride) - int(p.pad_top);
    const int ix0 = ox * int(p.stride) - int(p.pad_left);
    const float gs = tile_guard_scale(amax, p.guard);

    // Fragments whose output channels (or pixels) all lie past p.oc (npix) are never stored (the
    // epilogue's oo >= p.oc, pp < npix): with few channels (a small VAE's 8 or 16) most of a block.
    const uint live_rows = tile_live_rows(o0, sg, p.oc);
    const uint live_cols = tile_live_cols(p0, sg, npix);
    simdgroup_float8x8 acc[4][4];
    tile_zero(acc);
    for (uint k0 = 0; k0 < kdim; k0 += TILE_K) {
        tile_stage_half(ws, wt, p.oc, kdim, o0, k0, tid);
        for (uint i = 0; i < 16; ++i) {
            const uint kx = k0 + kc + i;
            float v = 0.0f;
            if (pin && kx < kdim) {
                const uint c = kx / kk2;
                const uint r = kx % kk2;
                const int iy = iy0 + int(r / p.k);
                const int ix = ix0 + int(r % p.k);
                if (iy >= 0 && iy < int(p.h) && ix >= 0 && ix < int(p.w)) {
                    v = x[(c * p.h + uint(iy)) * p.w + uint(ix)];
                }
            }
            xs[(tid % 64) * TILE_LD + kc + i] = half(v * gs);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        tile_mac_live(acc, ws, xs, sg, live_rows, live_cols);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    // Epilogue: lane holds fragment elements (r, c) and (r, c + 1); rows are outputs, columns pixels.
    const uint sm = tile_sg_row(sg);
    const uint sn = tile_sg_col(sg);
    const uint fr = tile_lane_row(lane);
    const uint fc = tile_lane_col(lane);
    for (uint i = 0; i < 4; ++i) {
        const uint oo = o0 + sm + 8 * i + fr;
        if (oo >= p.oc) {
            continue;
        }
        const float b = p.has_bias != 0 ? bias[oo] : 0.0f;
        const float inv = 1.0f / gs;
        for (uint j = 0; j < 4; ++j) {
            for (uint e = 0; e < 2; ++e) {
                const uint pp = p0 + sn + 8 * j + fc + e;
                if (pp < npix) {
                    y[oo * npix + pp] = acc[i][j].thread_elements()[e] * inv + b;
                }
            }
        }
    }
}

kernel void vae_chnorm(device const float* x [[buffer(0)]],
                       device const float* gamma [[buffer(1)]],
                       device float* y [[buffer(2)]],
                       constant NormParams& p [[buffer(3)]],
                       uint gid [[thread_position_in_grid]])
{
    if (gid >= p.pixels) {
        return;
    }
    float ss = 0.0f;
    for (uint c = 0; c < p.c; ++c) {
        const float v = x[c * p.pixels + gid];
        ss += v * v;
    }
    const float inv = rsqrt(ss / float(p.c) + p.eps);
    for (uint c = 0; c < p.c; ++c) {
        y[c * p.pixels + gid] = x[c * p.pixels + gid] * inv * gamma[c];
    }
}

kernel void vae_elt(device const float* a [[buffer(0)]],
                    device const float* b [[buffer(1)]],
                    device float* y [[buffer(2)]],
                    constant EltParams& p [[buffer(3)]],
                    uint gid [[thread_position_in_grid]])
{
    if (gid >= p.n) {
        return;
    }
    switch (p.op) {
    case 0: {
        const float v = a[gid];
        y[gid] = v / (1.0f + exp(-v));
        break;
    }
    case 1:
        y[gid] = a[gid] + b[gid % p.bn];
        break;
    case 2:
        y[gid] = a[gid] * b[gid % p.bn];
        break;
    case 3:
        y[gid] = p.s * a[gid];
        break;
    case 4:
        y[gid] = a[gid];
        break;
    case 6: {
        const float v = a[gid];
        y[gid] = 0.5f * v * (1.0f + precise::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
        break;
    }
    case 7: {
        const float v = a[gid];
        y[gid] = v / (1.0f + exp(-v)) * b[gid % p.bn];
        break;
    }
    case 8: {
        const float v = a[gid];
        y[gid] = v >= 0.0f ? v : p.s * v;
        break;
    }
    case 9: {
        const float v = a[gid];
        y[gid] = v >= 0.0f ? v : v * b[gid / p.bn];
        break;
    }
    default:
        y[gid] = 0.0f;
        break;
    }
}

kernel void vae_upsample(device const float* x [[buffer(0)]],
                         device float* y [[buffer(1)]],
                         constant UpParams& p [[buffer(2)]],
                         uint gid [[thread_position_in_grid]])
{
    const uint ow = p.w * p.f;
    const uint oh = p.h * p.f;
    if (gid >= p.c * oh * ow) {
        return;
    }
    const uint xx = gid % ow;
    const uint yy = (gid / ow) % oh;
    const uint c = gid / (ow * oh);
    y[gid] = x[(c * p.h + yy / p.f) * p.w + xx / p.f];
}

kernel void vae_shuffle(device const float* x [[buffer(0)]],
                        device float* y [[buffer(1)]],
                        constant ShuffleParams& p [[buffer(2)]],
                        uint gid [[thread_position_in_grid]])
{
    const uint W = p.w * p.r;
    const uint H = p.h * p.r;
    if (gid >= p.c * H * W) {
        return;
    }
    const uint X = gid % W;
    const uint Y = (gid / W) % H;
    const uint c = gid / (W * H);
    const uint small = ((c * p.r * p.r + (Y % p.r) * p.r + X % p.r) * p.h + Y / p.r) * p.w + X / p.r;
    if (p.unshuffle != 0) {
        y[small] = x[gid];
    } else {
        y[gid] = x[small];
    }
}

kernel void vae_transpose(device const float* x [[buffer(0)]],
                          device float* y [[buffer(1)]],
                          constant TransposeParams& p [[buffer(2)]],
                          uint2 tg [[threadgroup_position_in_grid]],
                          uint2 tp [[thread_position_in_threadgroup]])
{
    threadgroup float tile[32][33];
    const uint c0 = tg.x * 32;
    const uint r0 = tg.y * 32;
    for (uint i = tp.y; i < 32; i += 8) {
        const uint r = r0 + i;
        const uint c = c0 + tp.x;
        tile[i][tp.x] = (r < p.rows && c < p.cols) ? x[r * p.cols + c] : 0.0f;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint i = tp.y; i < 32; i += 8) {
        const uint c = c0 + i;
        const uint r = r0 + tp.x;
        if (c < p.cols && r < p.rows) {
            y[c * p.rows + r] = tile[tp.x][i];
        }
    }
}
