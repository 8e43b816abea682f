// graft_rt/shape.hpp - moving elements without arithmetic: transposition, concatenation,
// reversal of an axis, zero padding and cropping. Arrays are row-major; shapes have at most
// max_rank axes.
#pragma once

#include <algorithm>
#include <cstring>

#include "graft_rt/core.hpp"

namespace graft_rt {

/// The most axes transpose, pad_nd (and resize.hpp's upsample_nearest) take.
constexpr int max_rank = 8;

/// Visits every index of the axes [0, q) (sizes d, q <= max_rank) calling f(x offset, y offset),
/// the offsets moving by xs[k] / ys[k] along axis k.
template <class F>
inline void odometer(int q, const i64* d, const i64* xs, const i64* ys, F f) {
    i64 idx[max_rank] = {0, 0, 0, 0, 0, 0, 0, 0};
    i64 xo = 0, yo = 0;
    do f(xo, yo);
    while (next_position(q, d, idx, xo, xs, yo, ys));
}

/// y[i, j] = x[j * stride + i] for i < n, j < C: C rows of x interleaved.
template <int C>
inline void interleave(const float* x, i64 stride, float* y, i64 n) {
    for (i64 i = 0; i < n; ++i)
        for (int j = 0; j < C; ++j) y[i * C + j] = x[j * stride + i];
}

/// y = x with its axes permuted: y's axis i is x's axis perm[i]. Size-1 axes are dropped and
/// axes adjacent in both fused; contiguous runs are copied, and otherwise the output axis that is
/// contiguous in x is tiled against the innermost output axis, so that reads and writes both
/// touch few cache lines per tile. transpose_strided: over an x whose axis i has stride
/// xstride[i] (a block of a larger tensor); transpose: over a whole, contiguous x.
inline void transpose_strided(const float* x, float* y, const i64* in_shape, const i64* xstride, const int* perm, int rank) {
    i64 total = 1;
    for (int i = 0; i < rank; ++i) total *= in_shape[i];
    if (total <= 0) return;
    i64 d[max_rank], xs[max_rank];  // the output axes: sizes and strides in x
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
    i64 ys[max_rank];
    for (i64 k = q - 1, s = 1; k >= 0; --k) {
        ys[k] = s;
        s *= d[k];
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
    int a = -1;  // the output axis contiguous in x
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
    if (q == 2 && ya == inner && inner <= 4) {  // rows of x interleaved into few columns (an image to
        // channels-last): one sweep, each row of y written whole (the compiler vectorizes a fixed count)
        switch (inner) {
            case 2: interleave<2>(x, in_stride, y, da); return;
            case 3: interleave<3>(x, in_stride, y, da); return;
            case 4: interleave<4>(x, in_stride, y, da); return;
            default: break;
        }
    }
    i64 od[max_rank], oxs[max_rank], oys[max_rank];  // the other axes: all but a and the innermost
    int oq = 0;
    for (int k = 0; k < q - 1; ++k) {
        if (k == a) continue;
        od[oq] = d[k];
        oxs[oq] = xs[k];
        oys[oq] = ys[k];
        ++oq;
    }
    // A tile reads BJ lines of x at a time. At a stride of a multiple of 4 KB they all fall into
    // one set of the L1 cache (8 ways on most x86): 16 of them evicted each other before their
    // next 15 floats were read ([64, 128, 64] -> [128, 64, 64]: 0.75 ms; with 130 in the middle,
    // or 4 lines at a time, about 0.3).
    const i64 BJ = in_stride % 1024 == 0 ? 4 : B;
    auto tile2d = [&](i64 xo, i64 yo) {
        for (i64 i0 = 0; i0 < da; i0 += B) {
            const i64 ie = std::min(da, i0 + B);
            for (i64 j0 = 0; j0 < inner; j0 += BJ) {
                const i64 je = std::min(inner, j0 + BJ);
                for (i64 i = i0; i < ie; ++i) {
                    const float* xp = x + xo + i;
                    float* yp = y + yo + i * ya;
                    for (i64 j = j0; j < je; ++j) yp[j] = xp[j * in_stride];
                }
            }
        }
    };
    if (oq == 0) tile2d(0, 0);
    else odometer(oq, od, oxs, oys, tile2d);
}

inline void transpose(const float* x, float* y, const i64* in_shape, const int* perm, int rank) {
    i64 xstride[max_rank];
    for (i64 i = rank - 1, s = 1; i >= 0; --i) {
        xstride[i] = s;
        s *= in_shape[i];
    }
    transpose_strided(x, y, in_shape, xstride, perm, rank);
}

/// Concatenates n inputs along the middle axis: input k viewed as [outer, lens[k], inner], y as
/// [outer, sum of lens, inner]. A block already in its place in y (the memory plan may put an
/// input there) is not copied.
inline void concat(const float* const* xs, const i64* lens, int n, float* y, i64 outer, i64 inner) {
    i64 total = 0;
    for (int k = 0; k < n; ++k) total += lens[k];
    for (i64 o = 0; o < outer; ++o) {
        float* yo = y + o * total * inner;
        for (int k = 0; k < n; ++k) {
            const i64 chunk = lens[k] * inner;
            const float* src = xs[k] + o * chunk;
            // memmove: an input already in place is skipped, and g++ -O1 warns (-Wrestrict) on a memcpy
            // it cannot prove disjoint
            if (chunk > 0 && src != yo) std::memmove(yo, src, bytes(chunk));
            yo += chunk;
        }
    }
}

/// y = x with the middle axis of [outer, len, inner] in reverse order.
inline void reverse(const float* x, float* y, i64 outer, i64 len, i64 inner) {
    for (i64 o = 0; o < outer; ++o)
        for (i64 t = 0; t < len; ++t)
            std::memcpy(y + (o * len + (len - 1 - t)) * inner, x + (o * len + t) * inner, bytes(inner));
}

/// The row-major strides of x [in_shape] and y [out_shape], both of `rank` axes; false when y is
/// empty.
inline bool strides_of(const i64* in_shape, const i64* out_shape, int rank, i64* in_stride, i64* out_stride) {
    i64 is = 1, os = 1;
    for (int i = rank - 1; i >= 0; --i) {
        in_stride[i] = is, out_stride[i] = os;
        is *= in_shape[i], os *= out_shape[i];
    }
    return os > 0;
}

/// What pad_nd writes where x does not reach: a constant, the nearest edge entry, or x reflected
/// about its edge entries (numpy's and ONNX's "reflect": [1 2 3] padded by 2 is [3 2 1 2 3 2 1]).
enum pad_mode : int { pad_constant = 0, pad_edge = 1, pad_reflect = 2 };

/// n entries of `value` at y.
inline void fill(float* y, i64 n, float value) {
    if (value == 0.f) std::memset(y, 0, bytes(n));
    else std::fill(y, y + n, value);
}

/// pad_nd from axis `axis` on, pad_constant; strides are those of the axes (row-major).
inline void pad_axis(const float* x, float* y, const i64* in_shape, const i64* out_shape, const i64* begin,
                     const i64* in_stride, const i64* out_stride, int rank, int axis, float value) {
    const i64 in = in_shape[axis], out = out_shape[axis], b = begin[axis];
    // the output positions o whose source o - b is in [0, in)
    const i64 lo = std::min(std::max<i64>(b, 0), out), hi = std::min(std::max(b + in, lo), out);
    const i64 is = in_stride[axis], os = out_stride[axis];
    if (lo > 0) fill(y, lo * os, value);
    if (axis == rank - 1) {
        if (hi > lo) std::memcpy(y + lo, x + (lo - b), bytes(hi - lo));
    } else {
        for (i64 o = lo; o < hi; ++o)
            pad_axis(x + (o - b) * is, y + o * os, in_shape, out_shape, begin, in_stride, out_stride, rank, axis + 1, value);
    }
    if (out > hi) fill(y + hi * os, (out - hi) * os, value);
}

/// The entry of an axis of n entries that position i (any integer) reads under pad_edge or
/// pad_reflect.
inline i64 pad_source(i64 i, i64 n, int mode) {
    if (i >= 0 && i < n) return i;
    if (mode == pad_edge || n == 1) return i < 0 ? 0 : n - 1;
    const i64 period = 2 * (n - 1);
    i64 m = i % period;
    if (m < 0) m += period;
    return m < n ? m : period - m;
}

/// pad_nd from axis `axis` on, pad_edge or pad_reflect.
inline void pad_axis_mapped(const float* x, float* y, const i64* in_shape, const i64* out_shape, const i64* begin,
                            const i64* in_stride, const i64* out_stride, int rank, int axis, int mode) {
    const i64 in = in_shape[axis], out = out_shape[axis], b = begin[axis];
    const i64 is = in_stride[axis], os = out_stride[axis];
    for (i64 o = 0; o < out; ++o) {
        const i64 s = pad_source(o - b, in, mode);
        if (axis == rank - 1) y[o] = x[s];
        else pad_axis_mapped(x + s * is, y + o * os, in_shape, out_shape, begin, in_stride, out_stride, rank, axis + 1, mode);
    }
}

/// y = x shifted by begin[i] along axis i (negative: cropped); where nothing maps, `value`
/// (pad_constant) or entries of x (pad_edge, pad_reflect: see pad_mode). x and y have the same
/// rank (<= max_rank).
inline void pad_nd(const float* x, float* y, const i64* in_shape, const i64* out_shape, const i64* begin, int rank,
                   int mode = pad_constant, float value = 0.f) {
    if (rank <= 0) {
        y[0] = x[0];
        return;
    }
    i64 in_stride[max_rank], out_stride[max_rank];
    if (!strides_of(in_shape, out_shape, rank, in_stride, out_stride)) return;
    if (mode == pad_constant) pad_axis(x, y, in_shape, out_shape, begin, in_stride, out_stride, rank, 0, value);
    else pad_axis_mapped(x, y, in_shape, out_shape, begin, in_stride, out_stride, rank, 0, mode);
}

}  // namespace graft_rt
