// MetalPerformancePrimitives.h - part of the kernels/emu metal_stdlib stand-in: the subset of
// Metal Performance Primitives' tensor operations the project's kernels use
// (kernels/gemmtensor.metal), from Apple's documentation (WWDC25 "Combine Metal 4 machine
// learning and graphics", the MPP reference) and the public kernels that call it (ggml's Metal
// backend, MLX's NAX GEMM). Its semantics are pinned by kernels/emu's tests (TestEmuTensorOps):
//
//   matmul2d_descriptor(m, n, k, transpose_left, transpose_right, relaxed_precision, mode)
//     destination D (m × n) = left (m × k) · right (k × n), or D += it (mode multiply_accumulate).
//     Tensors list extents innermost first (metal_tensor): left is dextents(k, m), or (m, k)
//     when transposed; right is (n, k), or (k, n) when transposed; a destination is (n, m).
//   matmul2d<descriptor, execution_simdgroups<S>> op
//     op.get_destination_cooperative_tensor<L, R, E>(): the destination, spread over the 32·S
//       threads of the scope (each holds get_capacity() elements, is_valid_element(i) telling
//       which exist); op.run(left, right, dest); dest.store(tensor) writes the elements that fall
//       inside the tensor's extents, dest.load(tensor) reads them.
//
// Arithmetic: the inputs are converted exactly to float and every element accumulates
// d = fma(l, r, d) for k = 0, 1, … in order, in float: the same sequence as the emulated
// simdgroup 8×8 multiply-accumulate, so a kernel that feeds both the same operands gets the same
// bits here. The order and precision of Apple's hardware accumulation are not published; only a
// Mac can say how far it is from this (relaxed_precision is accepted and ignored).
#pragma once
#include "../metal_stdlib"
#include "../metal_tensor"

namespace metal {
// The threads that execute a tensor operation together: S whole simdgroups.
template <int S> struct execution_simdgroups { static constexpr int threads = 32 * S; };
using execution_simdgroup = execution_simdgroups<1>;
}  // namespace metal

namespace mpp {
namespace tensor_ops {
struct matmul2d_descriptor {
  enum class mode { multiply, multiply_accumulate };
  int m, n, k;
  bool transpose_left, transpose_right, relaxed_precision;
  mode matmul_mode;
  constexpr matmul2d_descriptor(int m_, int n_, int k_ = -1, bool tl = false, bool tr = false, bool rp = false, mode md = mode::multiply)
      : m(m_), n(n_), k(k_), transpose_left(tl), transpose_right(tr), relaxed_precision(rp), matmul_mode(md) {}
};

namespace detail {
// The flat index of the calling thread within its scope of Threads threads.
inline int scope_index(int threads) {
  return int(msl_rt::cur->tindex) % threads;
}
}  // namespace detail

// A destination of M × N elements of E spread over Threads threads: element e (row e / N, column
// e % N) belongs to thread e % Threads, at index e / Threads.
template <class E, int M, int N, int Threads> struct cooperative_destination {
  static constexpr int cap = (M * N + Threads - 1) / Threads;
  E v[cap];
  static constexpr int get_capacity() { return cap; }
  int element(int i) const { return i * Threads + detail::scope_index(Threads); }
  bool is_valid_element(int i) const { return i >= 0 && i < cap && element(i) < M * N; }
  thread E& operator[](int i) { return v[i]; }
  const thread E& operator[](int i) const { return v[i]; }
  template <class T> void store(const T& t) const {
    for (int i = 0; i < cap; i++) {
      const int e = element(i);
      if (e < M * N && t.in(e % N, e / N)) *t.at(e % N, e / N) = v[i];
    }
  }
  template <class T> void load(const T& t) {
    for (int i = 0; i < cap; i++) {
      const int e = element(i);
      v[i] = (e < M * N && t.in(e % N, e / N)) ? E(*t.at(e % N, e / N)) : E(0);
    }
  }
};

template <matmul2d_descriptor D, class Scope> struct matmul2d {
  static_assert(D.m > 0 && D.n > 0, "matmul2d: m and n must be static in this emulation");
  template <class L, class R, class E> using destination_t = cooperative_destination<E, D.m, D.n, Scope::threads>;
  template <class L, class R, class E> destination_t<L, R, E> get_destination_cooperative_tensor() const {
    destination_t<L, R, E> d;
    for (int i = 0; i < d.get_capacity(); i++) d.v[i] = E(0);
    return d;
  }
  // Element (row, col) of the logical left (m × k) and right (k × n) operands; 0 outside the
  // tensor's extents.
  template <class T> static float left(const T& t, int row, int kk) {
    const int i0 = D.transpose_left ? row : kk, i1 = D.transpose_left ? kk : row;
    return t.in(i0, i1) ? float(*t.at(i0, i1)) : 0.0f;
  }
  template <class T> static float right(const T& t, int kk, int col) {
    const int i0 = D.transpose_right ? kk : col, i1 = D.transpose_right ? col : kk;
    return t.in(i0, i1) ? float(*t.at(i0, i1)) : 0.0f;
  }
  template <class L, class R, class C> void run(const L& l, const R& r, C& c) const {
    const int kd = D.k > 0 ? D.k : (D.transpose_left ? l.get_extent(1) : l.get_extent(0));
    for (int i = 0; i < c.get_capacity(); i++) {
      const int e = c.element(i);
      if (e >= D.m * D.n) continue;
      const int row = e / D.n, col = e % D.n;
      float acc = D.matmul_mode == matmul2d_descriptor::mode::multiply_accumulate ? float(c.v[i]) : 0.0f;
      for (int kk = 0; kk < kd; kk++) acc = __builtin_fmaf(left(l, row, kk), right(r, kk, col), acc);
      c.v[i] = acc;
    }
  }
};
}  // namespace tensor_ops
}  // namespace mpp
