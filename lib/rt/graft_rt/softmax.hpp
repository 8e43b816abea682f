// graft_rt/softmax.hpp - softmax along one axis.
#pragma once

#include <algorithm>
#include <cmath>

#include "graft_rt/core.hpp"

namespace graft_rt {

/// Softmax along the middle of x viewed as [outer, len, inner] (shifted by the maximum, so large
/// values do not overflow). x and y may be the same memory.
inline void softmax(const float* x, float* y, i64 outer, i64 len, i64 inner) {
    if (len <= 0) return;
    if (inner == 1) {  // the axis is the last one: rows
        for (i64 o = 0; o < outer; ++o) {
            const float* xr = x + o * len;
            float* yr = y + o * len;
            float mx = xr[0];
            for (i64 l = 1; l < len; ++l) mx = xr[l] > mx ? xr[l] : mx;
            float sum = 0.f;
            for (i64 l = 0; l < len; ++l) {
                const float e = std::exp(xr[l] - mx);
                yr[l] = e;
                sum += e;
            }
            const float inv = 1.f / sum;
            for (i64 l = 0; l < len; ++l) yr[l] *= inv;
        }
        return;
    }
    // Strided: blocks of IB adjacent inner positions at once, so every pass over the axis reads
    // contiguous memory.
    constexpr i64 IB = 64;
    float mx[IB], sum[IB];
    for (i64 o = 0; o < outer; ++o) {
        const float* xo = x + o * len * inner;
        float* yo = y + o * len * inner;
        for (i64 i0 = 0; i0 < inner; i0 += IB) {
            const i64 nb = std::min(IB, inner - i0);
            for (i64 j = 0; j < nb; ++j) mx[j] = xo[i0 + j];
            for (i64 l = 1; l < len; ++l) {
                const float* xl = xo + l * inner + i0;
                for (i64 j = 0; j < nb; ++j) mx[j] = xl[j] > mx[j] ? xl[j] : mx[j];
            }
            for (i64 j = 0; j < nb; ++j) sum[j] = 0.f;
            for (i64 l = 0; l < len; ++l) {
                const float* xl = xo + l * inner + i0;
                float* yl = yo + l * inner + i0;
                for (i64 j = 0; j < nb; ++j) {
                    const float e = std::exp(xl[j] - mx[j]);
                    yl[j] = e;
                    sum[j] += e;
                }
            }
            for (i64 j = 0; j < nb; ++j) sum[j] = 1.f / sum[j];
            for (i64 l = 0; l < len; ++l) {
                float* yl = yo + l * inner + i0;
                for (i64 j = 0; j < nb; ++j) yl[j] *= sum[j];
            }
        }
    }
}

}  // namespace graft_rt
