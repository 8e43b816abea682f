// The dense kernel, detail::gemm and the batched matrix product, on top of the run-time
// dispatched GEMM in cpu/gemm (AVX-512 / AVX2+FMA / portable micro-kernels).
#include "cpu/gemm/gemm.hpp"
#include "cpu/internal.hpp"

namespace graft::cpu {

namespace detail {

void gemm(const float* x, std::int64_t ldx, const float* w, std::int64_t ldw, float* y, std::int64_t ldy,
          std::int64_t M, std::int64_t K, std::int64_t N, const float* bias, bool accumulate, const ActParams* act) {
    gemm::Epilogue e;
    e.bias = accumulate ? nullptr : bias;
    e.accumulate = accumulate;
    e.act = act;
    gemm::BMatrix b;
    b.data = w;
    b.ld = ldw;
    gemm::gemm(M, N, K, x, ldx, b, y, ldy, e, nullptr);
}

}  // namespace detail

void dense(const float* x, const float* w, const float* bias, float* y, std::int64_t M, std::int64_t K,
           std::int64_t N, const ActParams& a) {
    detail::gemm(x, K, w, N, y, N, M, K, N, bias, false, &a);
}

void batch_matmul(const float* x, const float* w, float* y, std::int64_t B, std::int64_t M, std::int64_t K,
                  std::int64_t N) {
    for (std::int64_t b = 0; b < B; ++b)
        detail::gemm(x + b * M * K, K, w + b * K * N, N, y + b * M * N, N, M, K, N, nullptr, false, nullptr);
}

}  // namespace graft::cpu
