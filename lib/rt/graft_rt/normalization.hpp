// graft_rt/normalization.hpp - layer, group and L2 normalization over rows, and local response
// normalization across channels. Statistics
// accumulate in double: a row of many values with a large mean keeps its variance (Keras computes
// in float32; the difference is far inside the 1e-5 graft's tests require).
#pragma once

#include <algorithm>
#include <cmath>

#include "graft_rt/core.hpp"

namespace graft_rt {

/// Each row of x [M, K]: (x - mean) / sqrt(var + eps) * gamma + beta (biased variance, Keras);
/// gamma / beta [K] or null (1 / 0). x and y may be the same memory.
inline void layer_norm(const float* x, const float* gamma, const float* beta, float* y, i64 M, i64 K, float eps) {
    if (K <= 0) return;
    for (i64 m = 0; m < M; ++m) {
        const float* xr = x + m * K;
        float* yr = y + m * K;
        double mean = 0;
        for (i64 k = 0; k < K; ++k) mean += xr[k];
        mean /= static_cast<double>(K);
        double var = 0;
        for (i64 k = 0; k < K; ++k) var += (xr[k] - mean) * (xr[k] - mean);
        var /= static_cast<double>(K);
        const double inv = 1.0 / std::sqrt(var + static_cast<double>(eps));
        for (i64 k = 0; k < K; ++k) {
            double v = (xr[k] - mean) * inv;
            if (gamma) v *= gamma[k];
            if (beta) v += beta[k];
            yr[k] = static_cast<float>(v);
        }
    }
}

/// Group normalization of x [N, S, C] (channels last), C split into `groups` contiguous groups:
/// statistics per (n, group) over S x C/groups; gamma / beta [C] or null. x and y may be the
/// same memory.
inline void group_norm(const float* x, const float* gamma, const float* beta, float* y, i64 N, i64 S, i64 C, i64 groups,
                       float eps) {
    if (groups <= 0 || C % groups != 0 || S <= 0) return;
    const i64 cg = C / groups;
    const double count = static_cast<double>(S * cg);
    for (i64 n = 0; n < N; ++n) {
        const float* xn = x + n * S * C;
        float* yn = y + n * S * C;
        for (i64 g = 0; g < groups; ++g) {
            double mean = 0, var = 0;
            for (i64 s = 0; s < S; ++s)
                for (i64 c = g * cg; c < (g + 1) * cg; ++c) mean += xn[s * C + c];
            mean /= count;
            for (i64 s = 0; s < S; ++s)
                for (i64 c = g * cg; c < (g + 1) * cg; ++c) var += (xn[s * C + c] - mean) * (xn[s * C + c] - mean);
            var /= count;
            const double inv = 1.0 / std::sqrt(var + static_cast<double>(eps));
            for (i64 s = 0; s < S; ++s)
                for (i64 c = g * cg; c < (g + 1) * cg; ++c) {
                    double v = (xn[s * C + c] - mean) * inv;
                    if (gamma) v *= gamma[c];
                    if (beta) v += beta[c];
                    yn[s * C + c] = static_cast<float>(v);
                }
        }
    }
}

/// Each row of x [M, K] divided by sqrt(max(sum x^2, eps)) (tf.math.l2_normalize). x and y may
/// be the same memory.
inline void l2_normalize(const float* x, float* y, i64 M, i64 K, float eps) {
    for (i64 m = 0; m < M; ++m) {
        const float* xr = x + m * K;
        float* yr = y + m * K;
        double ss = 0;
        for (i64 k = 0; k < K; ++k) ss += static_cast<double>(xr[k]) * xr[k];
        const double inv = 1.0 / std::sqrt(std::max(ss, static_cast<double>(eps)));
        for (i64 k = 0; k < K; ++k) yr[k] = static_cast<float>(xr[k] * inv);
    }
}

/// Local response normalization across the middle axis of x [outer, len, inner] (ONNX LRN): y =
/// x / (bias + alpha / size * the sum of x^2 over the window from (size - 1) / 2 entries before
/// to size / 2 after, cut at the ends) ^ beta. y must not be x.
inline void lrn(const float* x, float* y, i64 outer, i64 len, i64 inner, i64 size, float alpha, float beta, float bias) {
    const i64 before = (size - 1) / 2, after = size / 2;
    const float scale = alpha / static_cast<float>(size);
    for (i64 o = 0; o < outer; ++o) {
        const float* xo = x + o * len * inner;
        for (i64 c = 0; c < len; ++c) {
            float* yc = y + (o * len + c) * inner;
            std::fill(yc, yc + inner, 0.f);
            for (i64 k = std::max<i64>(c - before, 0); k <= std::min(c + after, len - 1); ++k) {
                const float* xk = xo + k * inner;
                for (i64 i = 0; i < inner; ++i) yc[i] += xk[i] * xk[i];
            }
            const float* xc = xo + c * inner;
            for (i64 i = 0; i < inner; ++i) yc[i] = xc[i] / std::pow(bias + scale * yc[i], beta);
        }
    }
}

}  // namespace graft_rt
