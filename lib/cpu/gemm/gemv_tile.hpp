// A column block of the matrix-vector product with one GEMM tile computed alongside it.
//
// An LSTM step at batch 1 reads the recurrent matrix R from L2 at the cache's rate, one
// multiply-add per float read, which leaves about half of the core's multiply-add slots idle. The
// input projection of later timesteps (x_t W, a GEMM of 8-row tiles, bound by multiply-adds) fills
// them: one loop runs both, Q of the block's k rows for each k row of the tile.
#pragma once

#include <cstdint>

namespace graft::cpu::gemm {

constexpr int kTileRows = 8;     // rows of the interleaved tile
constexpr int kTileCols = 32;    // its columns: two panels of pack_b's layout
constexpr int kGemvBlock = 128;  // columns of a block of gemv_pack's layout (gemv.hpp)

struct GemvTileArgs {
    // The block: c[0, 128) += a[0, K) . B, B one whole block of gemv_pack's layout ([K][128]).
    const float* a;
    const float* b;
    std::int64_t K;
    float* c;
    // The tile: C2 (8 rows, ldc2 apart; 32 columns) = A2 (8 rows of K2 floats, lda2 apart) . B2
    // + bias2, B2 two consecutive panels of pack_b's layout ([K2][16], bps2 floats apart);
    // bias2: 32 floats, or null.
    const float* a2;
    std::int64_t lda2;
    const float* b2;
    std::int64_t bps2;
    std::int64_t K2;
    float* c2;
    std::int64_t ldc2;
    const float* bias2;
    bool reverse = false;  // the block's k rows last to first (the tile's in order)
};

/// Whether gemv_block_tile runs on this CPU (AVX-512: the block's 8 accumulators and the tile's 16
/// fit in its 32 registers). Where it does not, callers run the two products apart.
bool gemv_block_tile_available();

/// Both products of g (K2 >= 1; K = 0 leaves c as it is and runs the tile alone). Only where
/// gemv_block_tile_available().
void gemv_block_tile(const GemvTileArgs& g);

/// The block alone: c[0, 128) += a[0, K) . B, its k rows last to first with `reverse`. Only where
/// gemv_block_tile_available().
void gemv_block(const float* a, const float* b, std::int64_t K, float* c, bool reverse = false);

}  // namespace graft::cpu::gemm
