// The text encoder's one-row decode (engine/qwen3vl/qwen3vlmetal's Generate): every kernel works
// on one token's row in float, with float accumulation, so the device's logits match the CPU's to
// float roundoff. A simdgroup (32 lanes) handles one output row, one norm row or one attention
// head; lanes stride over the row and meet in simd_sum / simd_max. No threadgroup memory.
//
//	dec_gemv     y[y_off + r] (+)= Σ_c W[r, c] · x[x_off + c], W dequantized in the kernel from its
//	             stored codec (dtype: 0 f32, 1 f16, 2 bf16, 3 q8_row, 9 q8_2f, 15 q4tp), each weight read once
//	dec_rmsnorm  y[y_off + r·cols + i] = x[x_off + r·cols + i] · rms⁻¹ · w[i] over rows rows
//	dec_headrope per head of x (at y_off): RMSNorm with w, then half-split rotary with cos | sin
//	dec_attn     per query head: softmax(q·Kᵀ·scale)·V over keys cached rows, grouped-query
//	dec_swiglu   g[i] = SiLU(g[i]) · u[i]
//
// Dispatch: DecodeGrid(rows): threadgroups (ceil(rows / 8), 1, 1), 256 threads; simdgroup s of
// group g handles row 8g + s. dec_swiglu: DecodeElementGrid(n), thread i handles element i.
// Buffers: see each kernel; parameters DecParams at the last index.
#include <metal_stdlib>
using namespace metal;

struct DecParams {
    uint rows;      // output rows, norm rows, heads, elements
    uint cols;      // input width, norm width, head dim
    uint dtype;     // dec_gemv: the weight's codec
    uint add;       // dec_gemv: 1 adds to y (a residual), 0 stores
    uint y_off;     // first output element
    uint x_off;     // first input element
    uint keys;      // dec_attn: cached rows attended to (this token's included)
    uint kv_heads;  // dec_attn: key/value heads
    float eps;      // norms
    float scale;    // dec_attn: 1 / sqrt(head dim)
    uint stride;    // dec_attn: the scores scratch's row (≥ keys)
    uint pad0;
};

inline float dec_weight(device const uchar* w, uint dtype, uint rows, uint cols, uint r, uint c) {
    const uint i = r * cols + c;
    if (dtype == 1) {
        return float(((device const half*)w)[i]);
    }
    if (dtype == 2) {
        return as_type<float>(uint(((device const ushort*)w)[i]) << 16);
    }
    if (dtype == 3 || dtype == 9) {
        device const half* scales = (device const half*)(w + rows * cols);
        const float v = float(as_type<char>(w[i])) * float(scales[r]);
        if (dtype == 3) {
            return v;
        }
        device const half* field = (device const half*)(w + rows * cols + 2 * rows);
        return v * float(field[c]);
    }
    return ((device const float*)w)[i];
}

// Lane lane's share of row r of a q4tp matrix times x (cmf.md §9.3: [nibbles][row params lo,
// step as half][5-bit codes]): the lane holds weight lane of every 32-weight tile and, once per
// row, rung lane of the row's scale ladder 2^lo · (2^step)^lane, multiplied up as engine/quant
// does; each tile's scale is the lane its code names. cols is a multiple of 32.
inline float dec_q4tp_dot(device const uchar* w, uint rows, uint cols, uint r, uint lane, device const float* x) {
    const uint gpr = cols / 32;
    device const half* prm = (device const half*)(w + rows * gpr * 16 + 4 * r);
    const float ratio = precise::exp2(float(prm[1]));
    float rung = precise::exp2(float(prm[0]));
    for (uint c = 0; c < lane; ++c) {
        rung *= ratio;
    }
    device const uchar* codes = w + rows * gpr * 16 + 4 * rows + r * ((gpr * 5 + 7) / 8);
    device const uchar* tiles = w + r * gpr * 16;
    float acc = 0.0f;
    for (uint g = 0; g < gpr; ++g) {
        const uint bit = 5 * g;
        uint v = codes[bit >> 3];
        if ((bit & 7) > 3) {
            v |= uint(codes[(bit >> 3) + 1]) << 8;
        }
        const float s = simd_shuffle(rung, ushort((v >> (bit & 7)) & 31));
        const uint b = tiles[g * 16 + lane / 2];
        const uint n = (lane & 1) != 0 ? (b >> 4) : (b & 15);
        acc += ((float(n) - 8.0f) * s) * x[g * 32 + lane];
    }
    return acc;
}

// Buffers: 0 W (bytes as stored), 1 x, 2 y, 3 DecParams.
kernel void dec_gemv(device const uchar* w [[buffer(0)]],
                     device const float* x [[buffer(1)]],
                     device float* y [[buffer(2)]],
                     constant DecParams& p [[buffer(3)]],
                     uint g [[threadgroup_position_in_grid]],
                     uint s [[simdgroup_index_in_threadgroup]],
                     uint lane [[thread_index_in_simdgroup]])
{
    const uint r = 8 * g + s;
    if (r >= p.rows) {
        return;
    }
    float acc = 0.0f;
    if (p.dtype == 15) {
        acc = dec_q4tp_dot(w, p.rows, p.cols, r, lane, x + p.x_off);
    } else {
        for (uint c = lane; c < p.cols; c += 32) {
            acc += dec_weight(w, p.dtype, p.rows, p.cols, r, c) * x[p.x_off + c];
        }
    }
    const float dot = simd_sum(acc);
    if (lane == 0) {
        y[p.y_off + r] = p.add != 0 ? y[p.y_off + r] + dot : dot;
    }
}

// Buffers: 0 x, 1 w (cols gains), 2 y, 3 DecParams.
kernel void dec_rmsnorm(device const float* x [[buffer(0)]],
                        device const float* w [[buffer(1)]],
                        device float* y [[buffer(2)]],
                        constant DecParams& p [[buffer(3)]],
                        uint g [[threadgroup_position_in_grid]],
                        uint s [[simdgroup_index_in_threadgroup]],
                        uint lane [[thread_index_in_simdgroup]])
{
    const uint r = 8 * g + s;
    if (r >= p.rows) {
        return;
    }
    device const float* v = x + p.x_off + r * p.cols;
    float ss = 0.0f;
    for (uint i = lane; i < p.cols; i += 32) {
        ss += v[i] * v[i];
    }
    const float inv = 1.0f / precise::sqrt(simd_sum(ss) / float(p.cols) + p.eps);
    for (uint i = lane; i < p.cols; i += 32) {
        y[p.y_off + r * p.cols + i] = v[i] * inv * w[i];
    }
}

// In place on rows heads of cols values at y_off. Buffers: 0 x, 1 w (cols gains),
// 2 cos | sin (cols/2 each), 3 DecParams.
kernel void dec_headrope(device float* x [[buffer(0)]],
                         device const float* w [[buffer(1)]],
                         device const float* cs [[buffer(2)]],
                         constant DecParams& p [[buffer(3)]],
                         uint g [[threadgroup_position_in_grid]],
                         uint s [[simdgroup_index_in_threadgroup]],
                         uint lane [[thread_index_in_simdgroup]])
{
    const uint h = 8 * g + s;
    if (h >= p.rows) {
        return;
    }
    device float* v = x + p.y_off + h * p.cols;
    const uint half_dim = p.cols / 2;
    float ss = 0.0f;
    for (uint i = lane; i < p.cols; i += 32) {
        ss += v[i] * v[i];
    }
    const float inv = 1.0f / precise::sqrt(simd_sum(ss) / float(p.cols) + p.eps);
    for (uint j = lane; j < half_dim; j += 32) {
        const float a = v[j] * inv * w[j];
        const float b = v[j + half_dim] * inv * w[j + half_dim];
        const float c = cs[j];
        const float sn = cs[half_dim + j];
        v[j] = a * c - b * sn;
        v[j + half_dim] = a * sn + b * c;
    }
}

// Buffers: 0 q (rows heads × cols), 1 K cache, 2 V cache (rows of kv_heads × cols), 3 out,
// 4 scores scratch (rows × stride floats), 5 DecParams.
kernel void dec_attn(device const float* q [[buffer(0)]],
                     device const float* k [[buffer(1)]],
                     device const float* v [[buffer(2)]],
                     device float* out [[buffer(3)]],
                     device float* scores [[buffer(4)]],
                     constant DecParams& p [[buffer(5)]],
                     uint g [[threadgroup_position_in_grid]],
                     uint s [[simdgroup_index_in_threadgroup]],
                     uint lane [[thread_index_in_simdgroup]])
{
    const uint h = 8 * g + s;
    if (h >= p.rows) {
        return;
    }
    const uint hd = p.cols;
    const uint kvh = h / (p.rows / p.kv_heads);
    const uint kvw = p.kv_heads * hd;
    device const float* qh = q + h * hd;
    device float* sc = scores + h * p.stride;
    float m = -FLT_MAX;
    for (uint t = lane; t < p.keys; t += 32) {
        device const float* kt = k + t * kvw + kvh * hd;
        float dot = 0.0f;
        for (uint d = 0; d < hd; ++d) {
            dot += qh[d] * kt[d];
        }
        const float sv = dot * p.scale;
        sc[t] = sv;
        m = max(m, sv);
    }
    m = simd_max(m);
    float sum = 0.0f;
    for (uint t = lane; t < p.keys; t += 32) {
        const float e = precise::exp(sc[t] - m);
        sc[t] = e;
        sum += e;
    }
    sum = simd_sum(sum);
    simdgroup_barrier(mem_flags::mem_device);
    const float inv = 1.0f / sum;
    for (uint d = lane; d < hd; d += 32) {
        float acc = 0.0f;
        for (uint t = 0; t < p.keys; ++t) {
            acc += sc[t] * v[t * kvw + kvh * hd + d];
        }
        out[h * hd + d] = acc * inv;
    }
}

// Buffers: 0 gate (in place), 1 up, 2 DecParams.
kernel void dec_swiglu(device float* gt [[buffer(0)]],
                       device const float* up [[buffer(1)]],
                       constant DecParams& p [[buffer(2)]],
                       uint i [[thread_position_in_grid]])
{
    if (i >= p.rows) {
        return;
    }
    const float x = gt[i];
    gt[i] = x / (1.0f + precise::exp(-x)) * up[i];
}
