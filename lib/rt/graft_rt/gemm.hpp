// graft_rt/gemm.hpp - the blocked matrix product over packed B panels, which the generated code's
// Dense, convolutions and recurrent layers are built on. The loop structure mirrors graft's native
// GEMM: B prepacked into column panels of 16, k in blocks, register tiles of rows x 16 columns
// whose accumulators the compiler keeps in vector registers (-O2 -march=native).
#pragma once

#include <algorithm>

#include "graft_rt/core.hpp"

namespace graft_rt {

// ---- matrix product ---------------------------------------------------------------------------
// B operands are packed: a K x N matrix as column panels of kPanel columns, panel p holding
// columns p*16 .. p*16+15 of row k at b[p * panel_stride + k * 16 + j], zero padded past N.
// Constant weights are packed when the code is generated; pack_panels does it at run time.
constexpr i64 kPanel = 16;    // columns per panel
constexpr i64 kKBlock = 256;  // k per block, so a tile's rows of A stay in L1
// Register tiles: rows x panels of accumulators, sized for the vector registers the compiler
// targets (-march): enough independent FMA chains to hide their latency, without spilling.
#if defined(__AVX512F__)
constexpr i64 kTileRows = 8;     // 32 registers of 16 floats: 8 x 32 accumulators
constexpr int kTilePanels = 2;
#else
constexpr i64 kTileRows = 6;     // AVX2 / SSE / NEON (16 registers): 6 x 16 accumulators
constexpr int kTilePanels = 1;
#endif

inline i64 packed_floats(i64 K, i64 N) { return (N + kPanel - 1) / kPanel * kPanel * K; }

/// Packs row-major w [K, N] (row stride ldw) into panels at `out` (packed_floats(K, N) floats).
inline void pack_panels(const float* w, i64 ldw, i64 K, i64 N, float* out) {
    for (i64 p = 0; p * kPanel < N; ++p) {
        const i64 n0 = p * kPanel, cols = std::min(kPanel, N - n0);
        for (i64 k = 0; k < K; ++k) {
            float* dst = out + (p * K + k) * kPanel;
            for (i64 j = 0; j < kPanel; ++j) dst[j] = j < cols ? w[k * ldw + n0 + j] : 0.f;
        }
    }
}

/// One register tile: R rows x P panels of C (P * 16 columns, `cols` of them valid) over kc values
/// of k; B's panels are bps floats apart. Starts from C (load_c), else from bias (or zero).
template <int R, int P>
inline void gemm_tile(const float* a, i64 lda, const float* b, i64 bps, float* c, i64 ldc, i64 kc, i64 cols, bool load_c,
                      const float* bias) {
    constexpr i64 W = P * kPanel;
    float acc[R][W];
    if (cols == W) {
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r)
            for (i64 j = 0; j < W; ++j) acc[r][j] = load_c ? c[r * ldc + j] : bias ? bias[j] : 0.f;
    } else {
        for (int r = 0; r < R; ++r)
            for (i64 j = 0; j < W; ++j) acc[r][j] = j >= cols ? 0.f : load_c ? c[r * ldc + j] : bias ? bias[j] : 0.f;
    }
    for (i64 k = 0; k < kc; ++k) {
#pragma GCC unroll 16  // (g++ and clang++) R x P independent chains of vector FMAs in flight
        for (int r = 0; r < R; ++r) {
            const float av = a[r * lda + k];
#pragma GCC unroll 4
            for (int q = 0; q < P; ++q) {
                const float* bk = b + q * bps + k * kPanel;
                for (i64 j = 0; j < kPanel; ++j) acc[r][q * kPanel + j] += av * bk[j];
            }
        }
    }
    if (cols == W) {
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r)
            for (i64 j = 0; j < W; ++j) c[r * ldc + j] = acc[r][j];
    } else {
        for (int r = 0; r < R; ++r)
            for (i64 j = 0; j < cols; ++j) c[r * ldc + j] = acc[r][j];
    }
}

/// R rows of C across all N columns: groups of P panels (fewer rows, more panels, so that
/// enough independent accumulators are in flight), halving P for the last panels.
template <int R>
inline void gemm_rows(const float* a, i64 lda, const float* B, i64 bps, float* c, i64 ldc, i64 kc, i64 N, bool load_c,
                      const float* bias) {
    constexpr int kP = R == 1 ? 4 : R <= 3 ? 2 : kTilePanels;
    const i64 panels = (N + kPanel - 1) / kPanel;
    for (i64 p = 0; p < panels;) {
        const i64 n0 = p * kPanel;
        const float* b = B + p * bps;
        const float* bias_p = bias ? bias + n0 : nullptr;
        if (kP >= 4 && p + 4 <= panels) {
            gemm_tile<R, (kP >= 4 ? 4 : 1)>(a, lda, b, bps, c + n0, ldc, kc, std::min<i64>(4 * kPanel, N - n0), load_c, bias_p);
            p += 4;
        } else if (kP >= 2 && p + 2 <= panels) {
            gemm_tile<R, (kP >= 2 ? 2 : 1)>(a, lda, b, bps, c + n0, ldc, kc, std::min<i64>(2 * kPanel, N - n0), load_c, bias_p);
            p += 2;
        } else {
            gemm_tile<R, 1>(a, lda, b, bps, c + n0, ldc, kc, std::min<i64>(kPanel, N - n0), load_c, bias_p);
            p += 1;
        }
    }
}

/// C[M, N] = A[M, K] . B + bias (bias [N] or null), or C += A . B when `accumulate`.
/// A and C are row-major with row strides lda and ldc; B is packed with panel stride bps
/// (K * kPanel for a whole matrix; B may also point at row k0 of a larger packed matrix).
/// Loops: k blocks of kKBlock, then tiles of kTileRows rows, then groups of panels.
inline void gemm(i64 M, i64 N, i64 K, const float* A, i64 lda, const float* B, i64 bps, float* C, i64 ldc,
                 const float* bias, bool accumulate) {
    if (K == 0 && !accumulate)
        for (i64 m = 0; m < M; ++m)
            for (i64 n = 0; n < N; ++n) C[m * ldc + n] = bias ? bias[n] : 0.f;
    for (i64 k0 = 0; k0 < K; k0 += kKBlock) {
        const i64 kc = std::min(kKBlock, K - k0);
        const bool load_c = accumulate || k0 > 0;
        const float* b = B + k0 * kPanel;
        for (i64 m = 0; m < M; m += kTileRows) {
            const float* a = A + m * lda + k0;
            float* c = C + m * ldc;
            switch (std::min(kTileRows, M - m)) {
                case 8: gemm_rows<8>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                case 7: gemm_rows<7>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                case 6: gemm_rows<6>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                case 5: gemm_rows<5>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                case 4: gemm_rows<4>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                case 3: gemm_rows<3>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                case 2: gemm_rows<2>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
                default: gemm_rows<1>(a, lda, b, bps, c, ldc, kc, N, load_c, bias); break;
            }
        }
    }
}

}  // namespace graft_rt
