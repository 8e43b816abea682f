// Internals shared by the native kernel files (not part of the kernel interface).
#pragma once

#include "cpu/kernels.hpp"

namespace graft::cpu::detail {

/// General matrix product on strided row-major operands:
///   y[M,N] = bias[N] + x[M,K] . w[K,N]   (accumulate == false; bias may be null -> 0)
///   y[M,N] += x[M,K] . w[K,N]             (accumulate == true; bias ignored)
/// ldx, ldw, ldy are row strides in floats. When act is non-null and not linear, it is
/// applied to y after the product (fused epilogue). Allocates nothing.
void gemm(const float* x, std::int64_t ldx, const float* w, std::int64_t ldw, float* y, std::int64_t ldy,
          std::int64_t M, std::int64_t K, std::int64_t N, const float* bias, bool accumulate,
          const ActParams* act);

}  // namespace graft::cpu::detail
