// graft_rt/linear.hpp - Dense (graft's Linear) and the batched matrix product, on graft_rt::gemm.
#pragma once

#include "graft_rt/act.hpp"
#include "graft_rt/core.hpp"
#include "graft_rt/gemm.hpp"

namespace graft_rt {

/// y[M, N] = act(x[M, K] . w + bias + residual); w packed (Keras Dense kernel [K, N]), bias [N]
/// or null, residual [M, N] or null.
inline void dense(const float* x, const float* w, const float* bias, float* y, i64 M, i64 K, i64 N,
                  const ActParams& act, const float* residual = nullptr) {
    gemm(M, N, K, x, K, w, K * kPanel, y, N, bias, false);
    if (residual)
        for (i64 i = 0; i < M * N; ++i) y[i] += residual[i];
    if (act.kind != Act::linear) activation(y, y, M * N, act);
}

/// y[b] = x[b] . w[b] for x [B, M, K], w [B, K, N], y [B, M, N]; work: packed_floats(K, N) floats.
inline void batch_matmul(const float* x, const float* w, float* y, i64 B, i64 M, i64 K, i64 N, float* work) {
    for (i64 b = 0; b < B; ++b) {
        pack_panels(w + b * K * N, N, K, N, work);
        gemm(M, N, K, x + b * M * K, K, work, K * kPanel, y + b * M * N, N, nullptr, false);
    }
}

}  // namespace graft_rt
