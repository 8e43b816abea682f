// PReLU. (Layer, group and L2 normalization: graft_rt/normalization.hpp.)
#include "cpu/kernels.hpp"

namespace graft::cpu {

using i64 = std::int64_t;

void prelu(const float* x, const float* alpha, float* y, i64 N, i64 K) {
    for (i64 n = 0; n < N; ++n)
        for (i64 k = 0; k < K; ++k) {
            const float v = x[n * K + k];
            y[n * K + k] = v < 0.f ? alpha[k] * v : v;
        }
}

}  // namespace graft::cpu
