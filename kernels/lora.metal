// LoRA terms of a linear layer, added to the output of its GEMM (engine/ml/metal): the down
// projection t = (x·Aᵀ) ⊙ s, then the up projection y += mul·t·Bᵀ + bias_mul·bias (the two
// scales differ when x and y are stored behind different power-of-two guards). Exact patches
// (.diff) go through the same pair as factors of rank min(in, out). Simple and exact first: one
// thread per output element, float accumulation, factors in float.
//
//   qi_lora_down_h  x half  [n][ldx] from x_off, a float [m][k], s float [m] → t float [n][m]
//   qi_lora_down_f  the same with x float
//   qi_lora_up      t float [n][k], b float [m][k], bias float [m] (when has_bias) →
//                   y float [n][ldy] from y_off, y += mul·Σ t·b + bias_mul·bias
//   qi_lora_up_h    the same with y half
//   qi_lora_lnscale h float [n][k] = LN(x[row0 + r])·fs (the input of proj_out, as qi_final
//                   computes it; one thread per row)
//
// Dispatch: down and up: threadgroups (ceil(m / 64), n, 1), 64 threads, thread (c, r) writes
// output column c of row r; lnscale: threadgroups (ceil(n / 64), 1, 1), 64 threads, thread r.
// Buffers: down: 0 x, 1 a, 2 s, 3 t, 4 LoraParams; up: 0 t, 1 b, 2 bias, 3 y, 4 LoraParams;
//          lnscale: 0 x, 1 fs, 2 h, 3 LoraParams (k = width, eps, row0 = x_off).
#include <metal_stdlib>
using namespace metal;

struct LoraParams {
    uint n;         // rows
    uint m;         // output columns (down: the rank; up: the layer's outputs)
    uint k;         // reduction length (down: the layer's inputs; up: the rank)
    uint ldx;       // elements between rows of x (down, lnscale)
    uint ldy;       // elements between rows of y (up)
    uint x_off;     // element offset of x (lnscale: first row)
    uint y_off;     // element offset of y
    uint has_bias;  // up: 1 adds bias[c]
    float mul;      // up: scale of the added term
    float eps;      // lnscale: LayerNorm epsilon
    float bias_mul; // up: scale of the bias
    uint pad1;
};

kernel void qi_lora_down_h(device const half* x [[buffer(0)]],
                           device const float* a [[buffer(1)]],
                           device const float* s [[buffer(2)]],
                           device float* t [[buffer(3)]],
                           constant LoraParams& p [[buffer(4)]],
                           uint2 gid [[thread_position_in_grid]])
{
    const uint c = gid.x, r = gid.y;
    if (c >= p.m || r >= p.n) {
        return;
    }
    device const half* xr = x + r * p.ldx + p.x_off;
    device const float* ac = a + c * p.k;
    float acc = 0.0f;
    for (uint i = 0; i < p.k; ++i) {
        acc = fma(float(xr[i]), ac[i], acc);
    }
    t[r * p.m + c] = acc * s[c];
}

kernel void qi_lora_down_f(device const float* x [[buffer(0)]],
                           device const float* a [[buffer(1)]],
                           device const float* s [[buffer(2)]],
                           device float* t [[buffer(3)]],
                           constant LoraParams& p [[buffer(4)]],
                           uint2 gid [[thread_position_in_grid]])
{
    const uint c = gid.x, r = gid.y;
    if (c >= p.m || r >= p.n) {
        return;
    }
    device const float* xr = x + r * p.ldx + p.x_off;
    device const float* ac = a + c * p.k;
    float acc = 0.0f;
    for (uint i = 0; i < p.k; ++i) {
        acc = fma(xr[i], ac[i], acc);
    }
    t[r * p.m + c] = acc * s[c];
}

static float lora_up_value(device const float* t, device const float* b, device const float* bias,
                           constant LoraParams& p, uint c, uint r)
{
    device const float* tr = t + r * p.k;
    device const float* bc = b + c * p.k;
    float acc = 0.0f;
    for (uint i = 0; i < p.k; ++i) {
        acc = fma(tr[i], bc[i], acc);
    }
    acc *= p.mul;
    if (p.has_bias != 0) {
        acc += bias[c] * p.bias_mul;
    }
    return acc;
}

kernel void qi_lora_up(device const float* t [[buffer(0)]],
                       device const float* b [[buffer(1)]],
                       device const float* bias [[buffer(2)]],
                       device float* y [[buffer(3)]],
                       constant LoraParams& p [[buffer(4)]],
                       uint2 gid [[thread_position_in_grid]])
{
    const uint c = gid.x, r = gid.y;
    if (c >= p.m || r >= p.n) {
        return;
    }
    y[r * p.ldy + p.y_off + c] += lora_up_value(t, b, bias, p, c, r);
}

kernel void qi_lora_up_h(device const float* t [[buffer(0)]],
                         device const float* b [[buffer(1)]],
                         device const float* bias [[buffer(2)]],
                         device half* y [[buffer(3)]],
                         constant LoraParams& p [[buffer(4)]],
                         uint2 gid [[thread_position_in_grid]])
{
    const uint c = gid.x, r = gid.y;
    if (c >= p.m || r >= p.n) {
        return;
    }
    device half* yp = y + r * p.ldy + p.y_off + c;
    *yp = half(float(*yp) + lora_up_value(t, b, bias, p, c, r));
}

kernel void qi_lora_lnscale(device const float* x [[buffer(0)]],
                            device const float* fs [[buffer(1)]],
                            device float* h [[buffer(2)]],
                            constant LoraParams& p [[buffer(3)]],
                            uint r [[thread_position_in_grid]])
{
    if (r >= p.n) {
        return;
    }
    device const float* xr = x + (p.x_off + r) * p.k;
    float s = 0.0f;
    for (uint i = 0; i < p.k; ++i) {
        s += xr[i];
    }
    const float mean = s / float(p.k);
    float q = 0.0f;
    for (uint i = 0; i < p.k; ++i) {
        const float d = xr[i] - mean;
        q += d * d;
    }
    const float inv = rsqrt(q / float(p.k) + p.eps);
    for (uint i = 0; i < p.k; ++i) {
        h[r * p.k + i] = (xr[i] - mean) * inv * fs[i];
    }
}
