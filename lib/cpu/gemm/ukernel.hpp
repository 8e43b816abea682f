// The GEMM micro-kernel interface shared by the per-ISA translation units.
//
// A micro-kernel computes a tile of C: `rows` x (16 * P) columns, over a block of k made of
// `nseg` segments of `len` consecutive k each. Segment s of row r reads A at a[s*kMaxRows + r]
// (a row pointer, so plain matrices, strided rows and convolution taps all look alike);
// B rows for those k follow each other at stride ldb, in panels of 16 columns `bps` apart.
// This header has no code: the ISA files include it under different target options.
#pragma once

#include <cstdint>

namespace graft::cpu::gemm {

constexpr int kPanel = 16;    // columns per B panel (prepacked layout: [N/16][K][16])
constexpr int kMaxRows = 12;  // largest micro-tile height of any ISA

struct UkArgs {
    const float* const* a;  // nseg * kMaxRows row pointers
    std::int64_t nseg, len;
    const float* b;         // B at the block's first k, panel 0
    std::int64_t ldb;       // floats between consecutive k rows of B
    std::int64_t bps;       // floats between consecutive panels
    float* c;
    std::int64_t ldc;
    int cols;               // valid columns (<= 16 * P); the kernel's row count is exact
    bool load_c;            // start from C, else from bias (or zero)
    const float* bias;      // when !load_c: >= cols entries, or null
    bool last;              // last k block: add the residual, apply relu, then the clamp
    const float* res;       // residual rows (stride ldr), or null
    std::int64_t ldr;
    bool relu;              // max(x, 0) (NaN becomes 0)
    bool clamp;             // then min(hi, max(lo, x)) (NaN stays): clip, ReLU6
    float lo, hi;
    int tiles = 1;          // tiles side by side, (16 * P) columns and P panels apart; all full if > 1
    std::int64_t prefetch = 0;  // > 0: prefetch each panel of B this many k rows ahead
};

using Uk = void (*)(const UkArgs&);

/// The micro-kernels of one instruction set.
struct IsaKernels {
    const char* name;
    int mr;                       // tile height for full tiles
    int pref_p[kMaxRows + 1];     // panels per tile for each row count (1, 2 or 4)
    Uk uk[kMaxRows + 1][3];       // [rows][P index: 0 -> 1 panel, 1 -> 2, 2 -> 4]
    int wide_rows;                // 0, or the most rows of the 1.5-panel tiles below
    Uk uk_wide[kMaxRows + 1];     // [rows]: 24 columns (a panel and the first half of the next)
};

/// Each returns null when the build target cannot produce that instruction set.
const IsaKernels* generic_kernels();
const IsaKernels* avx2_kernels();
const IsaKernels* avx512_kernels();

enum class Isa : int;
/// The micro-kernels of `isa`; the portable ones where the build has none for it (gemm.cpp).
const IsaKernels& micro_kernels(Isa isa);

}  // namespace graft::cpu::gemm
