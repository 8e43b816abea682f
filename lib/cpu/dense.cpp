// The dense kernel, detail::gemm and the batched matrix product, on top of the run-time
// dispatched GEMM in cpu/gemm (AVX-512 / AVX2+FMA / portable micro-kernels).
#include "cpu/gemm/gemm.hpp"
#include "cpu/internal.hpp"
#include "cpu/threadpool.hpp"

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

void dense(const float* x, const float* w, const float* bias, float* y, std::int64_t M, std::int64_t K, std::int64_t N,
           const ActParams& a) {
    detail::gemm(x, K, w, N, y, N, M, K, N, bias, false, &a);
}

void batch_matmul(const float* x, const float* w, float* y, std::int64_t B, std::int64_t M, std::int64_t K,
                  std::int64_t N, ThreadPool* pool) {
    auto products = [&](std::int64_t b0, std::int64_t b1, ThreadPool* split) {
        for (std::int64_t b = b0; b < b1; ++b) {
            gemm::BMatrix bm;
            bm.data = w + b * K * N;
            bm.ld = N;
            gemm::gemm(M, N, K, x + b * M * K, K, bm, y + b * M * N, N, gemm::Epilogue{}, split);
        }
    };
    if (B < pool_size(pool)) {  // fewer products than threads: each one split over them
        products(0, B, pool);
        return;
    }
    // Whole products per thread (attention's heads are 64x64x64 each, too small to split).
    parallel_ranges(pool, B, B * M * N * K, std::int64_t{1} << 15,
                    [&](std::int64_t b0, std::int64_t b1) { products(b0, b1, nullptr); });
}

}  // namespace graft::cpu
