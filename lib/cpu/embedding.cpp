// The batched matrix product. (Embedding lookup and Keras masks: graft_rt/embedding.hpp.)
#include "cpu/internal.hpp"

namespace graft::cpu {

using i64 = std::int64_t;

void batch_matmul(const float* x, const float* w, float* y, i64 B, i64 M, i64 K, i64 N) {
    for (i64 b = 0; b < B; ++b)
        detail::gemm(x + b * M * K, K, w + b * K * N, N, y + b * M * N, N, M, K, N, nullptr, false, nullptr);
}

}  // namespace graft::cpu
