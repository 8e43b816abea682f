// graft_rt/along_axis.hpp - ops along one axis of x, viewed as [outer, len, inner] around it: the
// k largest or smallest entries with their indices (ONNX TopK, torch.topk) and running sums
// (ONNX CumSum, torch.cumsum).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "graft_rt/core.hpp"

namespace graft_rt {

/// Whether entry a (at index ia) comes before entry b (at ib) in TopK's order: the larger first
/// (largest) or the smaller first, equal values by the lower index (ONNX's rule). NaN counts as
/// larger than every number, so the order is total and a NaN never breaks the sort.
inline bool topk_before(float a, i64 ia, float b, i64 ib, bool largest) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) {
        if (na && nb) return ia < ib;
        return largest ? na : nb;
    }
    if (a != b) return largest ? a > b : a < b;
    return ia < ib;
}

/// values, indices [outer, k, inner] = along the middle axis of x [outer, len, inner] (1 <= k <=
/// len), its k largest (largest) or smallest entries, in that order, and their indices as float
/// values. `k_fed`: null, or the k the model was fed when it runs (a model input): the outputs'
/// shape was fixed when converting, so a k that differs gives NaN values and indices -1.
/// `work` holds len i64.
inline void topk(const float* x, float* values, float* indices, i64 outer, i64 len, i64 inner, i64 k, bool largest,
                 const float* k_fed, i64* work) {
    const bool ok = !k_fed || static_cast<double>(k_fed[0]) == static_cast<double>(k);
    for (i64 o = 0; o < outer; ++o)
        for (i64 i = 0; i < inner; ++i) {
            const float* row = x + o * len * inner + i;
            for (i64 j = 0; j < len; ++j) work[j] = j;
            std::partial_sort(work, work + k, work + len,
                              [&](i64 a, i64 b) { return topk_before(row[a * inner], a, row[b * inner], b, largest); });
            for (i64 j = 0; j < k; ++j) {
                const i64 at = (o * k + j) * inner + i;
                values[at] = ok ? row[work[j] * inner] : std::numeric_limits<float>::quiet_NaN();
                indices[at] = ok ? static_cast<float>(work[j]) : -1.f;
            }
        }
}

/// y = the running sum of x [outer, len, inner] along its middle axis: y[j] = x[0] + ... + x[j],
/// without x[j] itself (exclusive; y[0] = 0), from the end (reverse: y[j] = x[j] + ... +
/// x[len - 1]). Sums accumulate in double. x and y may be the same memory.
inline void cumsum(const float* x, float* y, i64 outer, i64 len, i64 inner, bool exclusive, bool reverse) {
    for (i64 o = 0; o < outer; ++o)
        for (i64 i = 0; i < inner; ++i) {
            double s = 0;
            for (i64 t = 0; t < len; ++t) {
                const i64 at = (o * len + (reverse ? len - 1 - t : t)) * inner + i;
                const double v = x[at];
                if (!exclusive) s += v;
                y[at] = static_cast<float>(s);
                if (exclusive) s += v;
            }
        }
}

}  // namespace graft_rt
