// graft_rt/embedding.hpp - embedding lookups and Keras masks (Embedding mask_zero, Masking).
#pragma once

#include <cstring>

#include "graft_rt/core.hpp"

namespace graft_rt {

/// y[m, :] = table[int(idx[m]), :] for idx [M] (float, truncated toward zero like Keras' cast to
/// int32), table [V, D]. An index that is NaN or outside [0, V) gives a row of zeros: a kernel
/// cannot raise, and the table is never read out of bounds.
inline void embedding(const float* idx, const float* table, float* y, i64 M, i64 V, i64 D) {
    for (i64 m = 0; m < M; ++m) {
        const float v = idx[m];
        // (-1, V) covers exactly the indices 0..V-1 after truncation; NaN fails both comparisons.
        if (v > -1.f && v < static_cast<float>(V)) {
            const i64 i = static_cast<i64>(v);
            if (i >= 0 && i < V) {  // float rounding of V cannot let an index through
                std::memcpy(y + m * D, table + i * D, bytes(D));
                continue;
            }
        }
        std::memset(y + m * D, 0, bytes(D));
    }
}

/// mask[i] = x[i] != 0 (Keras Embedding mask_zero: the mask of the raw inputs).
inline void nonzero_mask(const float* x, float* mask, i64 n) {
    for (i64 i = 0; i < n; ++i) mask[i] = x[i] != 0.f ? 1.f : 0.f;
}

/// Keras Masking over rows of x [M, K]: keep = any(x[m, :] != mask_value); y[m, :] = keep ? x : 0;
/// mask[m] = keep (mask may be null). x and y may be the same memory.
inline void masking(const float* x, float* y, float* mask, i64 M, i64 K, float mask_value) {
    for (i64 m = 0; m < M; ++m) {
        const float* xr = x + m * K;
        float* yr = y + m * K;
        bool keep = false;
        for (i64 k = 0; k < K; ++k) keep = keep || xr[k] != mask_value;
        for (i64 k = 0; k < K; ++k) yr[k] = keep ? xr[k] : 0.f;
        if (mask) mask[m] = keep ? 1.f : 0.f;
    }
}

}  // namespace graft_rt
