// The int8 kernels' interface (qgemm.hpp), shared by the portable and the AVX2 translation units.
// No code: the ISA files include it under different target options.
#pragma once

#include <cstdint>

namespace graft::cpu::gemm {

constexpr int kQRows = 4;     // rows of a full int8 tile (AVX2: 8 accumulators, 2 weights, no spills)
constexpr int kQMaxRows = 8;  // the most rows of any set's tiles (AVX-512 VNNI quads)

/// One tile: `rows` rows x P panels of 16 columns, over all of K.
struct QTile {
    const std::int32_t* a;  // quantised rows: int16 pairs (k even in the low half), or u8 quads
                            // (q + 128, k ascending from the low byte), stride lda
    std::int64_t lda;       // int32s between rows (ceil(K/2))
    const float* sa;        // the rows' scales
    const std::int8_t* b;   // panel 0 of the tile: [K2][16][2], or [K4][16][4] for quads
    std::int64_t bps;       // bytes between panels
    std::int64_t K2;        // pairs (quads) of k
    const std::int32_t* csum;  // quads: the column sums of the weights, from the first column
    const std::int32_t* za;    // quads: the rows' zero points (u8 = q + za[r]), subtracted as za[r] x csum
    const float* sw;        // the first column's scale (16 * P valid entries, padded)
    float* c;
    std::int64_t ldc;
    int cols;              // valid columns (<= 16 * P)
    const float* init;     // added to every row (the bias), or null
    bool accumulate;       // add the old C instead
    bool prefetch;         // B is large: prefetch ahead
    // The activation, where the kernel set applies it (QKernels::clamps; clamp_form in
    // cpu/kernels.hpp): relu max(c, 0), then the clamp min(hi, max(lo, c)).
    bool relu = false, clamp = false;
    float lo = 0.f, hi = 0.f;
};

using QTileFn = void (*)(const QTile&);

struct QKernels {
    QTileFn rows[kQMaxRows + 1];    // `panels` panels, 1..mr rows
    QTileFn narrow[kQMaxRows + 1];  // 1 panel, 1..mr rows (the last ones when `panels` > 1)
    int panels;                  // panels of a `rows` tile
    int kstep;                   // 2: int16 pairs of k (vpmaddwd, vpdpwssd); 4: u8 x s8 quads (vpdpbusd)
    QTileFn wide;                // 1 row, 4 panels (the batch-1 product)
    /// Quantises x [0, K) into q [0, 2 * ceil(K / 2)) (the pad zero); returns the scale.
    float (*quantise)(const float* x, std::int64_t K, std::int16_t* q);
    int mr = kQRows;  // rows of a full tile
    /// Quads: quantises x [0, K) straight to u8 in u [0, 4 * ceil(K / 4)) over the row's own
    /// range, asymmetric: x ~ (u - zero) x scale, with [min(x, 0), max(x, 0)] spread over 0..255
    /// (twice the levels of the symmetric int8 for a row of one sign, as after a ReLU). Returns
    /// the scale and sets *zero. Null: `quantise` (symmetric), then u = q + 128, zero 128.
    float (*quantise_u8)(const float* x, std::int64_t K, std::uint8_t* u, std::int32_t* zero) = nullptr;
    /// Whether the tiles apply QTile's relu and clamp as they store (else the driver runs the
    /// activation on the stored rows).
    bool clamps = false;
};

const QKernels& qkernels_generic();
/// Null where the build has no AVX2 code.
const QKernels* qkernels_avx2();
/// AVX-512 VNNI (vpdpwssd on 16 columns, tiles of 2 panels); null where the build has no
/// AVX-512 code or the CPU no AVX-512 VNNI.
const QKernels* qkernels_avx512_vnni();
/// The quad kernels (kstep 4): portable, and AVX-512 VNNI vpdpbusd (null as above).
const QKernels& qkernels_generic_quads();
const QKernels* qkernels_avx512_vnni_quads();

}  // namespace graft::cpu::gemm
