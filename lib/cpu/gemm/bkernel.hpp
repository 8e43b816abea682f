// The bf16 kernels' interface (qgemm.hpp, Precision::bf16), shared by the portable and the
// AVX-512 BF16 translation units. No code: the ISA files include it under different targets.
#pragma once

#include <cstdint>

#include "cpu/gemm/gemm.hpp"

namespace graft::cpu::gemm {

constexpr int kBRows = 8;    // rows of a full bf16 tile
constexpr int kBPanels = 2;  // panels of 16 columns in a tile of several rows
constexpr int kBWide = 8;    // panels of the one-row tile (the batch-1 product)

/// A bf16 pair: k even in the low 16 bits, k odd in the high ones.
using BPair = std::uint32_t;

/// One tile: `rows` rows x P panels of 16 columns, over all of K.
struct BTile {
    const BPair* a;    // the rows in bf16 pairs, stride lda
    std::int64_t lda;  // pairs between rows (ceil(K/2))
    const BPair* b;    // panel 0 of the tile: [K2][16] pairs
    std::int64_t bps;  // pairs between panels (K2 * 16)
    std::int64_t K2;   // pairs of k
    float* c;
    std::int64_t ldc;
    int cols;           // valid columns (<= 16 * P)
    const float* init;  // added to every row (the bias), or null
    bool accumulate;    // add the old C instead
    bool prefetch;      // B is large: prefetch ahead
};

using BTileFn = void (*)(const BTile&);

struct BKernels {
    BTileFn rows[kBRows + 1];    // kBPanels panels, 1..kBRows rows
    BTileFn narrow[kBRows + 1];  // 1 panel, 1..kBRows rows (the last odd panel)
    BTileFn wide;                // 1 row, kBWide panels
    /// Rounds x [0, K) to bf16 (to nearest even) into pairs q [0, ceil(K / 2)), the pad zero.
    void (*convert)(const float* x, std::int64_t K, BPair* q);
};

const BKernels& bkernels_generic();
/// Null where the build has no AVX-512 BF16 code or the CPU no AVX-512 BF16 (vdpbf16ps).
const BKernels* bkernels_avx512();

// ---- the bf16 half of qgemm.hpp (bgemm.cpp) ---------------------------------------------------

/// Pairs bpack() writes for a K x N matrix: panels of 16 columns, [ceil(N/16)][ceil(K/2)][16].
std::int64_t bpacked_pairs(std::int64_t K, std::int64_t N);
/// Rounds row-major w [K, N] (row stride ldw) to bf16 and packs it; out is zeroed beforehand.
void bpack(const float* w, std::int64_t ldw, std::int64_t K, std::int64_t N, BPair* out);
/// qgemm() for a bf16 B; `work` holds M * ceil(K / 2) pairs.
void bgemm(std::int64_t M, std::int64_t N, std::int64_t K, const float* A, std::int64_t lda, const BPair* B, float* C,
           std::int64_t ldc, const Epilogue& e, BPair* work, ThreadPool* pool);

}  // namespace graft::cpu::gemm
