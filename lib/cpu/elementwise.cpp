// Transpose and concatenation.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu/kernels.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;

inline std::size_t bytes(i64 n) { return static_cast<std::size_t>(n) * sizeof(float); }

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
