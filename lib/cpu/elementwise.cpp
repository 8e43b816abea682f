// Channel affine, merges, softmax, transpose and concatenation.
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

/// Visits every index of the axes [0, q) (dims d) calling f(x offset, y offset).
template <class F>
void odometer(int q, const i64* d, const i64* xs, const i64* ys, F f) {
    i64 idx[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    i64 xo = 0, yo = 0;
    for (;;) {
        f(xo, yo);
        int k = q - 1;
        for (; k >= 0; --k) {
            if (++idx[k] < d[k]) {
                xo += xs[k];
                yo += ys[k];
                break;
            }
            xo -= (d[k] - 1) * xs[k];
            yo -= (d[k] - 1) * ys[k];
            idx[k] = 0;
        }
        if (k < 0) return;
    }
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

void transpose(const float* x, float* y, const std::int64_t* in_shape, const int* perm, int rank) {
    // Input strides, then the output axes with their input strides; drop size-1 axes and fuse
    // output-adjacent axes that are also adjacent (same order) in the input.
    i64 total = 1, xstride[8];
    for (int i = rank - 1; i >= 0; --i) {
        xstride[i] = total;
        total *= in_shape[i];
    }
    if (total <= 0) return;
    i64 d[8], xs[8];
    int q = 0;
    for (int i = 0; i < rank; ++i) {
        const i64 di = in_shape[perm[i]], si = xstride[perm[i]];
        if (di == 1) continue;
        if (q > 0 && xs[q - 1] == si * di) {
            d[q - 1] *= di;
            xs[q - 1] = si;
        } else {
            d[q] = di;
            xs[q] = si;
            ++q;
        }
    }
    if (q == 0) {
        y[0] = x[0];
        return;
    }
    i64 ys[8];
    {
        i64 s = 1;
        for (int k = q - 1; k >= 0; --k) {
            ys[k] = s;
            s *= d[k];
        }
    }
    const i64 inner = d[q - 1], in_stride = xs[q - 1];
    if (in_stride == 1) {  // contiguous runs: copy them
        if (q == 1) {
            std::memcpy(y, x, bytes(inner));
            return;
        }
        odometer(q - 1, d, xs, ys, [&](i64 xo, i64 yo) { std::memcpy(y + yo, x + xo, bytes(inner)); });
        return;
    }
    // Find the output axis that is contiguous in the input and tile it against the innermost
    // output axis, so both reads and writes touch few cache lines per tile.
    int a = -1;
    for (int k = 0; k < q - 1; ++k)
        if (xs[k] == 1) a = k;
    if (a < 0) {
        odometer(q - 1, d, xs, ys, [&](i64 xo, i64 yo) {
            for (i64 j = 0; j < inner; ++j) y[yo + j] = x[xo + j * in_stride];
        });
        return;
    }
    constexpr i64 B = 16;
    const i64 da = d[a], ya = ys[a];
    // Outer axes: everything except a and the innermost.
    i64 od[8], oxs[8], oys[8];
    int oq = 0;
    for (int k = 0; k < q - 1; ++k) {
        if (k == a) continue;
        od[oq] = d[k];
        oxs[oq] = xs[k];
        oys[oq] = ys[k];
        ++oq;
    }
    auto tile2d = [&](i64 xo, i64 yo) {
        for (i64 i0 = 0; i0 < da; i0 += B) {
            const i64 ie = std::min(da, i0 + B);
            for (i64 j0 = 0; j0 < inner; j0 += B) {
                const i64 je = std::min(inner, j0 + B);
                for (i64 i = i0; i < ie; ++i) {
                    const float* xp = x + xo + i;
                    float* yp = y + yo + i * ya;
                    for (i64 j = j0; j < je; ++j) yp[j] = xp[j * in_stride];
                }
            }
        }
    };
    if (oq == 0)
        tile2d(0, 0);
    else
        odometer(oq, od, oxs, oys, tile2d);
}

void concat(const float* const* xs, const std::int64_t* lens, int n, float* y, std::int64_t outer,
            std::int64_t inner) {
    i64 total = 0;
    for (int k = 0; k < n; ++k) total += lens[k];
    const i64 ystride = total * inner;
    for (i64 o = 0; o < outer; ++o) {
        float* yo = y + o * ystride;
        for (int k = 0; k < n; ++k) {
            const i64 chunk = lens[k] * inner;
            if (chunk > 0) std::memcpy(yo, xs[k] + o * chunk, bytes(chunk));
            yo += chunk;
        }
    }
}

}  // namespace graft::cpu
