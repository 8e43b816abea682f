// gemv_block_tile (gemv_tile.hpp): AVX-512 only.
#include "cpu/gemm/gemv_tile.hpp"

#include "cpu/gemm/gemm.hpp"
#include "cpu/simd.hpp"

namespace graft::cpu::gemm {

#ifdef GRAFT_SIMD_X86
GRAFT_SIMD_AVX512_BEGIN
namespace {

using i64 = std::int64_t;

/// The tile's k row i: two panel vectors of B2 times the 8 rows' a2[r, i].
inline __attribute__((always_inline)) void tile_row(const GemvTileArgs& g, i64 i, __m512 (&t)[kTileRows][2]) {
    const __m512 w0 = _mm512_loadu_ps(g.b2 + i * 16), w1 = _mm512_loadu_ps(g.b2 + g.bps2 + i * 16);
#pragma GCC unroll 8
    for (int r = 0; r < kTileRows; ++r) {
        const __m512 a = _mm512_set1_ps(g.a2[r * g.lda2 + i]);
        t[r][0] = _mm512_fmadd_ps(a, w0, t[r][0]);
        t[r][1] = _mm512_fmadd_ps(a, w1, t[r][1]);
    }
}

/// The block's k row k: 8 vectors of b times a[k].
inline __attribute__((always_inline)) void block_row(const float* a, const float* b, i64 k, __m512 (&acc)[8]) {
    const __m512 ak = _mm512_set1_ps(a[k]);
#pragma GCC unroll 8
    for (int v = 0; v < 8; ++v) acc[v] = _mm512_fmadd_ps(ak, _mm512_loadu_ps(b + k * kGemvBlock + 16 * v), acc[v]);
}

/// Q block rows per tile row while both last, then what is left of either; the block's rows last
/// to first with REV.
template <int Q, bool REV>
void run(const GemvTileArgs& g) {
    __m512 acc[8], t[kTileRows][2];
#pragma GCC unroll 8
    for (int v = 0; v < 8; ++v) acc[v] = _mm512_loadu_ps(g.c + 16 * v);
    const __m512 b0 = g.bias2 ? _mm512_loadu_ps(g.bias2) : _mm512_setzero_ps();
    const __m512 b1 = g.bias2 ? _mm512_loadu_ps(g.bias2 + 16) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int r = 0; r < kTileRows; ++r) t[r][0] = b0, t[r][1] = b1;
    i64 k = 0, i = 0;
    for (; i < g.K2 && k + Q <= g.K; ++i, k += Q) {
#pragma GCC unroll 4
        for (int q = 0; q < Q; ++q) block_row(g.a, g.b, REV ? g.K - 1 - (k + q) : k + q, acc);
        tile_row(g, i, t);
    }
    for (; k < g.K; ++k) block_row(g.a, g.b, REV ? g.K - 1 - k : k, acc);
    for (; i < g.K2; ++i) tile_row(g, i, t);
#pragma GCC unroll 8
    for (int v = 0; v < 8; ++v) _mm512_storeu_ps(g.c + 16 * v, acc[v]);
#pragma GCC unroll 8
    for (int r = 0; r < kTileRows; ++r) {
        _mm512_storeu_ps(g.c2 + r * g.ldc2, t[r][0]);
        _mm512_storeu_ps(g.c2 + r * g.ldc2 + 16, t[r][1]);
    }
}

}  // namespace

void gemv_block(const float* a, const float* b, std::int64_t K, float* c, bool reverse) {
    __m512 acc[8];
#pragma GCC unroll 8
    for (int v = 0; v < 8; ++v) acc[v] = _mm512_loadu_ps(c + 16 * v);
    if (reverse) {
#pragma GCC unroll 2
        for (i64 k = K - 1; k >= 0; --k) block_row(a, b, k, acc);
    } else {
#pragma GCC unroll 2
        for (i64 k = 0; k < K; ++k) block_row(a, b, k, acc);
    }
#pragma GCC unroll 8
    for (int v = 0; v < 8; ++v) _mm512_storeu_ps(c + 16 * v, acc[v]);
}

void gemv_block_tile(const GemvTileArgs& g) {
    // As many block rows per tile row as keeps both streams going to the end.
    if (g.K >= 4 * g.K2)
        g.reverse ? run<4, true>(g) : run<4, false>(g);
    else if (g.K >= 2 * g.K2)
        g.reverse ? run<2, true>(g) : run<2, false>(g);
    else
        g.reverse ? run<1, true>(g) : run<1, false>(g);
}
GRAFT_SIMD_AVX512_END

bool gemv_block_tile_available() { return active_isa() == Isa::avx512; }

#else
bool gemv_block_tile_available() { return false; }
void gemv_block_tile(const GemvTileArgs&) {}
void gemv_block(const float*, const float*, std::int64_t, float*, bool) {}
#endif

}  // namespace graft::cpu::gemm
