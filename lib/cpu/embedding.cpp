// Embedding lookup and Keras masks (mask_zero, Masking).
#include <cstring>

#include "cpu/internal.hpp"

namespace graft::cpu {

using i64 = std::int64_t;

void embedding(const float* idx, const float* table, float* y, i64 M, i64 V, i64 D) {
    const std::size_t row = static_cast<std::size_t>(D) * sizeof(float);
    for (i64 m = 0; m < M; ++m) {
        const float v = idx[m];
        // Keras casts to int32, truncating toward zero: (-1, V) covers exactly the indices 0..V-1.
        // NaN fails both comparisons.
        if (v > -1.f && v < static_cast<float>(V)) {
            const i64 i = static_cast<i64>(v);
            if (i >= 0 && i < V) {  // float rounding of V cannot let an index through
                std::memcpy(y + m * D, table + i * D, row);
                continue;
            }
        }
        std::memset(y + m * D, 0, row);
    }
}

void nonzero_mask(const float* x, float* mask, i64 n) {
    for (i64 i = 0; i < n; ++i) mask[i] = x[i] != 0.f ? 1.f : 0.f;
}

void masking(const float* x, float* y, float* mask, i64 M, i64 K, float mask_value) {
    for (i64 m = 0; m < M; ++m) {
        const float* xr = x + m * K;
        float* yr = y + m * K;
        bool keep = false;
        for (i64 k = 0; k < K; ++k) keep = keep || xr[k] != mask_value;
        for (i64 k = 0; k < K; ++k) yr[k] = keep ? xr[k] : 0.f;
        if (mask) mask[m] = keep ? 1.f : 0.f;
    }
}

}  // namespace graft::cpu
