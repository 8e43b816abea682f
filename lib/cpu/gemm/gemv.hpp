// Single-row matrix products c[N] = a[K] . B: what a batch-1 Dense and the recurrent step of
// an RNN at batch 1 run. They read every weight once per call, so they are bound by how fast
// B streams from L2 / L3, not by arithmetic. The kernels keep the accumulators in registers over
// all of K (no k blocks, no reload of C), and run up to 16 vectors of columns at once.
//
// Two layouts of B:
//  - pack_b's panels ([N/16][K][16]): gemv_packed(), what gemm() runs for M == 1;
//  - gemv_pack's column blocks ([ceil(N/128)][K][128], the last block as wide as needed,
//    rounded up to 16): gemv(). One contiguous stream per block, about 1.4x faster than the
//    panels when B sits in L2 (8 panel streams at once interfere in L1). 128 columns are 16
//    AVX2 or 8 AVX-512 accumulators: the kernel reads a block whole, row after row (256-wide
//    blocks read by AVX2 in two halves made two strided streams, 12-15% slower on Zen).
// No software prefetch: the cores' own stream prefetchers keep up with these sequential reads,
// and prefetching 8 rows ahead in software cost a Zen 4 core a fifth of its bandwidth from L3
// (784 x 512 and 512 x 512 blocks, out of L2: 72-78 GB/s with it, 92-97 without; the L3 reads
// at 100). Instruction set chosen at run time like the micro-kernels (active_isa()). With a
// pool, large products split the columns (whole blocks when there are enough), or, with fewer
// column blocks than threads, the k range (each thread sums its rows, then one pass adds up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/gemm/gemm.hpp"

namespace graft::cpu::gemm {

/// Floats gemv_pack's layout of a K x N matrix takes.
std::size_t gemv_packed_size(std::int64_t K, std::int64_t N);
/// Packs row-major w [K, N] (row stride ldw) into column blocks; out holds gemv_packed_size(K, N) floats.
void gemv_pack(const float* w, std::int64_t ldw, std::int64_t K, std::int64_t N, float* out);
std::vector<float> gemv_pack(const float* w, std::int64_t ldw, std::int64_t K, std::int64_t N);

/// c[0, N) = a[0, K) . B with B from gemv_pack, then the epilogue: bias (or, accumulating,
/// the old c), the residual row e.residual[0, N), the activation. K >= 1.
void gemv(std::int64_t N, std::int64_t K, const float* a, const float* b_gemv, float* c, const Epilogue& e,
          ThreadPool* pool = nullptr);

/// Only columns [n0, n1) of gemv() (n0 a multiple of 16, n1 <= N; c, the bias and the
/// residual are still indexed from column 0), on the calling thread: for callers that split
/// the columns over threads themselves.
void gemv_columns(std::int64_t N, std::int64_t K, const float* a, const float* b_gemv, float* c, const Epilogue& e,
                  std::int64_t n0, std::int64_t n1);

/// The same with B packed by pack_b (panels).
void gemv_packed(std::int64_t N, std::int64_t K, const float* a, const float* b_packed, float* c, const Epilogue& e,
                 ThreadPool* pool = nullptr);

}  // namespace graft::cpu::gemm
