// The int8 kernels' interface (qgemm.hpp), shared by the portable and the AVX2 translation units.
// No code: the ISA files include it under different target options.
#pragma once

#include <cstdint>

namespace graft::cpu::gemm {

constexpr int kQRows = 4;  // rows of a full int8 tile (AVX2: 8 accumulators, 2 weights, no spills)

/// One tile: `rows` rows x P panels of 16 columns, over all of K.
struct QTile {
    const std::int32_t* a;  // quantised rows: int16 pairs (k even in the low half), stride lda
    std::int64_t lda;       // int32s between rows (ceil(K/2))
    const float* sa;        // the rows' scales
    const std::int8_t* b;   // panel 0 of the tile: [K2][16][2]
    std::int64_t bps;       // bytes between panels
    std::int64_t K2;        // pairs of k
    const float* sw;        // the first column's scale (16 * P valid entries, padded)
    float* c;
    std::int64_t ldc;
    int cols;              // valid columns (<= 16 * P)
    const float* init;     // added to every row (the bias), or null
    bool accumulate;       // add the old C instead
    bool prefetch;         // B is large: prefetch ahead
};

using QTileFn = void (*)(const QTile&);

struct QKernels {
    QTileFn rows[kQRows + 1];    // `panels` panels, 1..kQRows rows
    QTileFn narrow[kQRows + 1];  // 1 panel, 1..kQRows rows (the last ones when `panels` > 1)
    int panels;                  // panels of a `rows` tile
    QTileFn wide;                // 1 row, 4 panels (the batch-1 product)
    /// Quantises x [0, K) into q [0, 2 * ceil(K / 2)) (the pad zero); returns the scale.
    float (*quantise)(const float* x, std::int64_t K, std::int16_t* q);
};

const QKernels& qkernels_generic();
/// Null where the build has no AVX2 code.
const QKernels* qkernels_avx2();
/// AVX-512 VNNI (vpdpwssd on 16 columns, tiles of 2 panels); null where the build has no
/// AVX-512 code or the CPU no AVX-512 VNNI.
const QKernels* qkernels_avx512_vnni();

}  // namespace graft::cpu::gemm
