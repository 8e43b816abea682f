// Support sections of the generated code: normalizations, embedding lookups and Keras masks. The
// same maths as graft's native kernels (lib/cpu), written as standalone C++17.
#include "backend/cpp/sections.hpp"
#include "ops/emit_util.hpp"

namespace graft::cpp {

std::vector<Section> math_sections() {
    std::vector<Section> s;
    s.push_back({"layer_norm", {"core"}, R"graft(
/// Each row of x [M, K]: (x - mean) / sqrt(var + eps) * gamma + beta (biased variance; statistics
/// in double). gamma / beta may be null. x and y may be the same memory.
inline void layer_norm(const float* x, const float* gamma, const float* beta, float* y, i64 M, i64 K, float eps) {
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
)graft"});

    s.push_back({"group_norm", {"core"}, R"graft(
/// x [N, S, C], C split into `groups` contiguous groups; statistics per (n, group) over S x C/groups.
inline void group_norm(const float* x, const float* gamma, const float* beta, float* y, i64 N, i64 S, i64 C, i64 groups,
                       float eps) {
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
)graft"});

    s.push_back({"l2_normalize", {"core"}, R"graft(
/// Each row of x [M, K] divided by sqrt(max(sum x^2, eps)).
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
)graft"});

    s.push_back({"embedding", {"core"}, R"graft(
/// y[m, :] = table[int(idx[m]), :] (truncated toward zero, like Keras' cast); an index that is NaN
/// or outside [0, V) gives a row of zeros, so the table is never read out of bounds.
inline void embedding(const float* idx, const float* table, float* y, i64 M, i64 V, i64 D) {
    for (i64 m = 0; m < M; ++m) {
        const float v = idx[m];
        if (v > -1.f && v < static_cast<float>(V)) {
            const i64 i = static_cast<i64>(v);
            if (i >= 0 && i < V) {
                std::memcpy(y + m * D, table + i * D, bytes(D));
                continue;
            }
        }
        std::memset(y + m * D, 0, bytes(D));
    }
}
)graft"});

    s.push_back({"masks", {"core"}, R"graft(
/// mask[i] = x[i] != 0 (Keras Embedding mask_zero).
inline void nonzero_mask(const float* x, float* mask, i64 n) {
    for (i64 i = 0; i < n; ++i) mask[i] = x[i] != 0.f ? 1.f : 0.f;
}

/// Keras Masking over rows of x [M, K]: a row equal to mask_value everywhere becomes zeros and
/// gets mask 0. x and y may be the same memory.
inline void masking(const float* x, float* y, float* mask, i64 M, i64 K, float mask_value) {
    for (i64 m = 0; m < M; ++m) {
        const float* xr = x + m * K;
        float* yr = y + m * K;
        bool keep = false;
        for (i64 k = 0; k < K; ++k) keep = keep || xr[k] != mask_value;
        for (i64 k = 0; k < K; ++k) yr[k] = keep ? xr[k] : 0.f;
        mask[m] = keep ? 1.f : 0.f;
    }
}
)graft"});
    return s;
}

}  // namespace graft::cpp
