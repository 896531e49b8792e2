// The Metal 4 tensor-operation subset kernels/emu implements (include/metal_tensor,
// include/MetalPerformancePrimitives): TestEmuTensorOps pins its semantics with these kernels.
// Left L is M × K, right R is K × N, destination D is M × N; extents are listed innermost first.
#include <metal_stdlib>
#include <metal_tensor>
#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>
using namespace metal;

constant constexpr int TM = 8;
constant constexpr int TN = 16;
constant constexpr int TK = 32;

using dtensor_h = tensor<device half, dextents<int, 2>, tensor_inline>;
using dtensor_f = tensor<device float, dextents<int, 2>, tensor_inline>;

// D = L · Rᵀᵀ: L stored row-major [m][k] at pitch 40 (extents (K, M)), R stored transposed [n][k]
// at pitch 36 (extents (K, N), transpose_right), D row-major [m][n] at pitch 20; two simdgroups.
kernel void mm_nt(device half* l [[buffer(0)]], device half* r [[buffer(1)]], device float* d [[buffer(2)]])
{
    mpp::tensor_ops::matmul2d<mpp::tensor_ops::matmul2d_descriptor(TM, TN, TK, false, true, false), execution_simdgroups<2>> op;
    dtensor_h tl(l, dextents<int, 2>(TK, TM), array<int, 2>({1, 40}));
    dtensor_h tr(r, dextents<int, 2>(TK, TN), array<int, 2>({1, 36}));
    auto acc = op.get_destination_cooperative_tensor<dtensor_h, dtensor_h, float>();
    op.run(tl, tr, acc);
    dtensor_f td(d, dextents<int, 2>(TN, TM), array<int, 2>({1, 20}));
    acc.store(td);
}

// D += L · R twice over the two halves of K: L stored transposed [k][m] (extents (M, K),
// transpose_left, packed), R stored [k][n] (extents (N, K), packed); one simdgroup.
kernel void mm_tn_acc(device half* l [[buffer(0)]], device half* r [[buffer(1)]], device float* d [[buffer(2)]])
{
    mpp::tensor_ops::matmul2d<mpp::tensor_ops::matmul2d_descriptor(TM, TN, TK / 2, true, false, false,
                                                                    mpp::tensor_ops::matmul2d_descriptor::mode::multiply_accumulate),
                              execution_simdgroup> op;
    auto acc = op.get_destination_cooperative_tensor<dtensor_h, dtensor_h, float>();
    for (int i = 0; i < acc.get_capacity(); ++i) {
        if (acc.is_valid_element(i)) {
            acc[i] = 0.0f;
        }
    }
    for (int h = 0; h < 2; ++h) {
        dtensor_h tl(l + h * (TK / 2) * TM, dextents<int, 2>(TM, TK / 2));
        dtensor_h tr(r + h * (TK / 2) * TN, dextents<int, 2>(TN, TK / 2));
        op.run(tl, tr, acc);
    }
    dtensor_f td(d, dextents<int, 2>(TN, TM));
    acc.store(td);
}

// As mm_nt, stored through a destination whose extents cut 3 columns and 2 rows: the elements
// outside are not written.
kernel void mm_clip(device half* l [[buffer(0)]], device half* r [[buffer(1)]], device float* d [[buffer(2)]])
{
    mpp::tensor_ops::matmul2d<mpp::tensor_ops::matmul2d_descriptor(TM, TN, TK, false, true, false), execution_simdgroups<2>> op;
    dtensor_h tl(l, dextents<int, 2>(TK, TM), array<int, 2>({1, 40}));
    dtensor_h tr(r, dextents<int, 2>(TK, TN), array<int, 2>({1, 36}));
    auto acc = op.get_destination_cooperative_tensor<dtensor_h, dtensor_h, float>();
    op.run(tl, tr, acc);
    dtensor_f td(d, dextents<int, 2>(TN - 3, TM - 2), array<int, 2>({1, 20}));
    acc.store(td);
}
