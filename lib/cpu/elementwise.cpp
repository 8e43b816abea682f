// Channel affine, merges and softmax.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu/kernels.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;

inline std::size_t bytes(i64 n) { return static_cast<std::size_t>(n) * sizeof(float); }

template <class F>
inline void combine(const float* a, const float* b, float* y, i64 size, F f) {
    for (i64 i = 0; i < size; ++i) y[i] = f(a[i], b[i]);
}

template <class F>
void merge_with(const float* const* xs, int n, float* y, i64 size, F f) {
    combine(xs[0], xs[1], y, size, f);  // reads xs[0][i] before writing y[i]: y may alias xs[0]
    for (int k = 2; k < n; ++k) combine(y, xs[k], y, size, f);
}

}  // namespace

void channel_affine(const float* x, const float* scale, const float* shift, float* y, std::int64_t outer,
                    std::int64_t channels, std::int64_t inner) {
    // scale/shift may be null (1 / 0).
    if (inner == 1) {  // channels last: vectorize over channels
        for (i64 o = 0; o < outer; ++o) {
            const float* xp = x + o * channels;
            float* yp = y + o * channels;
            if (scale && shift)
                for (i64 c = 0; c < channels; ++c) yp[c] = xp[c] * scale[c] + shift[c];
            else
                for (i64 c = 0; c < channels; ++c)
                    yp[c] = xp[c] * (scale ? scale[c] : 1.f) + (shift ? shift[c] : 0.f);
        }
        return;
    }
    for (i64 o = 0; o < outer; ++o) {
        for (i64 c = 0; c < channels; ++c) {
            const float s = scale ? scale[c] : 1.f, t = shift ? shift[c] : 0.f;
            const i64 base = (o * channels + c) * inner;
            const float* xp = x + base;
            float* yp = y + base;
            for (i64 i = 0; i < inner; ++i) yp[i] = xp[i] * s + t;
        }
    }
}

void merge(Merge kind, const float* const* xs, int n, float* y, std::int64_t size) {
    if (n <= 0 || size <= 0) return;
    if (n == 1) {
        if (xs[0] != y) std::memmove(y, xs[0], bytes(size));
        return;
    }
    switch (kind) {
        case Merge::add: merge_with(xs, n, y, size, [](float a, float b) { return a + b; }); return;
        case Merge::sub: merge_with(xs, 2, y, size, [](float a, float b) { return a - b; }); return;
        case Merge::mul: merge_with(xs, n, y, size, [](float a, float b) { return a * b; }); return;
        case Merge::max: merge_with(xs, n, y, size, [](float a, float b) { return b > a ? b : a; }); return;
        case Merge::min: merge_with(xs, n, y, size, [](float a, float b) { return b < a ? b : a; }); return;
        case Merge::avg: {
            merge_with(xs, n, y, size, [](float a, float b) { return a + b; });
            const float cnt = static_cast<float>(n);
            for (i64 i = 0; i < size; ++i) y[i] /= cnt;
            return;
        }
    }
}

void softmax(const float* x, float* y, std::int64_t outer, std::int64_t len, std::int64_t inner) {
    if (len <= 0) return;
    if (inner == 1) {
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
    // Strided softmax: work on blocks of IB adjacent inner positions at once so every pass over
    // the len axis reads contiguous memory.
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

}  // namespace graft::cpu
