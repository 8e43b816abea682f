// Support sections of the generated code: per-channel affine maps, merges, softmax and PReLU.
// The same maths as graft's native kernels (lib/cpu), written as standalone C++17.
#include "backend/cpp/sections.hpp"
#include "ops/emit_util.hpp"

namespace graft::cpp {

std::vector<Section> math_sections() {
    std::vector<Section> s;
    s.push_back({"channel_affine", {"core"}, R"graft(
/// y = x * scale[c] + shift[c], x viewed as [outer, channels, inner]; scale or shift may be null
/// (1 or 0). x and y may be the same memory.
inline void channel_affine(const float* x, const float* scale, const float* shift, float* y, i64 outer, i64 channels,
                           i64 inner) {
    for (i64 o = 0; o < outer; ++o) {
        if (inner == 1) {  // channels last: the inner loop runs over channels
            const float* xo = x + o * channels;
            float* yo = y + o * channels;
            for (i64 c = 0; c < channels; ++c) yo[c] = xo[c] * (scale ? scale[c] : 1.f) + (shift ? shift[c] : 0.f);
            continue;
        }
        for (i64 c = 0; c < channels; ++c) {
            const float s = scale ? scale[c] : 1.f, t = shift ? shift[c] : 0.f;
            const float* xc = x + (o * channels + c) * inner;
            float* yc = y + (o * channels + c) * inner;
            for (i64 i = 0; i < inner; ++i) yc[i] = xc[i] * s + t;
        }
    }
}
)graft"});

    s.push_back({"merge", {"core"}, R"graft(
/// y = a (op) b elementwise over n values; y may be the same memory as a or b.
enum class MergeOp { add, sub, mul, max, min };
inline void merge2(MergeOp op, const float* a, const float* b, float* y, i64 n) {
    switch (op) {
        case MergeOp::add: for (i64 i = 0; i < n; ++i) y[i] = a[i] + b[i]; return;
        case MergeOp::sub: for (i64 i = 0; i < n; ++i) y[i] = a[i] - b[i]; return;
        case MergeOp::mul: for (i64 i = 0; i < n; ++i) y[i] = a[i] * b[i]; return;
        case MergeOp::max: for (i64 i = 0; i < n; ++i) y[i] = b[i] > a[i] ? b[i] : a[i]; return;
        case MergeOp::min: for (i64 i = 0; i < n; ++i) y[i] = b[i] < a[i] ? b[i] : a[i]; return;
    }
}
inline void scale(const float* x, float* y, i64 n, float s) {
    for (i64 i = 0; i < n; ++i) y[i] = x[i] * s;
}
)graft"});

    s.push_back({"softmax", {"core"}, R"graft(
/// Softmax along the middle of x viewed as [outer, len, inner]; x and y may be the same memory.
inline void softmax(const float* x, float* y, i64 outer, i64 len, i64 inner) {
    constexpr i64 IB = 64;  // inner positions handled together, so each pass reads contiguous memory
    float mx[IB], sum[IB];
    for (i64 o = 0; o < outer; ++o) {
        const float* xo = x + o * len * inner;
        float* yo = y + o * len * inner;
        for (i64 i0 = 0; i0 < inner; i0 += IB) {
            const i64 nb = std::min(IB, inner - i0);
            for (i64 j = 0; j < nb; ++j) mx[j] = xo[i0 + j];
            for (i64 l = 1; l < len; ++l)
                for (i64 j = 0; j < nb; ++j) mx[j] = std::max(mx[j], xo[l * inner + i0 + j]);
            for (i64 j = 0; j < nb; ++j) sum[j] = 0.f;
            for (i64 l = 0; l < len; ++l)
                for (i64 j = 0; j < nb; ++j) {
                    const float e = std::exp(xo[l * inner + i0 + j] - mx[j]);
                    yo[l * inner + i0 + j] = e;
                    sum[j] += e;
                }
            for (i64 j = 0; j < nb; ++j) sum[j] = 1.f / sum[j];
            for (i64 l = 0; l < len; ++l)
                for (i64 j = 0; j < nb; ++j) yo[l * inner + i0 + j] *= sum[j];
        }
    }
}
)graft"});

    s.push_back({"prelu", {"core"}, R"graft(
/// x [N, K]: y = x < 0 ? alpha[k] * x : x.
inline void prelu(const float* x, const float* alpha, float* y, i64 N, i64 K) {
    for (i64 n = 0; n < N; ++n)
        for (i64 k = 0; k < K; ++k) {
            const float v = x[n * K + k];
            y[n * K + k] = v < 0.f ? alpha[k] * v : v;
        }
}
)graft"});

    return s;
}

}  // namespace graft::cpp
