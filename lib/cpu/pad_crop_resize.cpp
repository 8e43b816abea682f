// Zero padding / cropping, nearest-neighbour upsampling and bilinear resize.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu/internal.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;

inline std::size_t bytes(i64 n) { return static_cast<std::size_t>(n) * sizeof(float); }

struct PadDims {
    const i64* in;
    const i64* out;
    const i64* begin;
    i64 in_stride[8], out_stride[8];
    int rank;
};

void pad_rec(const PadDims& d, int axis, const float* x, float* y) {
    const i64 in = d.in[axis], out = d.out[axis], b = d.begin[axis];
    // output positions o with source o - b in [0, in)
    const i64 lo = std::clamp<i64>(b, 0, out), hi = std::clamp<i64>(b + in, lo, out);
    if (axis == d.rank - 1) {
        if (lo > 0) std::memset(y, 0, bytes(lo));
        if (hi > lo) std::memcpy(y + lo, x + (lo - b), bytes(hi - lo));
        if (out > hi) std::memset(y + hi, 0, bytes(out - hi));
        return;
    }
    const i64 os = d.out_stride[axis], is = d.in_stride[axis];
    if (lo > 0) std::memset(y, 0, bytes(lo * os));
    for (i64 o = lo; o < hi; ++o) pad_rec(d, axis + 1, x + (o - b) * is, y + o * os);
    if (out > hi) std::memset(y + hi * os, 0, bytes((out - hi) * os));
}

void up_rec(const i64* in, const i64* f, int rank, const i64* in_stride, const i64* out_stride, int axis,
            const float* x, float* y) {
    if (axis == rank - 1) {
        if (f[axis] == 1) {
            std::memcpy(y, x, bytes(in[axis]));
        } else {
            for (i64 i = 0; i < in[axis]; ++i) std::fill(y + i * f[axis], y + (i + 1) * f[axis], x[i]);
        }
        return;
    }
    const i64 os = out_stride[axis];
    for (i64 i = 0; i < in[axis]; ++i) {
        float* first = y + i * f[axis] * os;
        up_rec(in, f, rank, in_stride, out_stride, axis + 1, x + i * in_stride[axis], first);
        for (i64 r = 1; r < f[axis]; ++r) std::memcpy(first + r * os, first, bytes(os));
    }
}

struct Lerp {
    i64 lo, hi;
    float t;
};
Lerp lerp_of(i64 dst, i64 in, i64 out, bool half_pixel) {
    const float scale = static_cast<float>(in) / static_cast<float>(out);
    const float src = half_pixel ? (static_cast<float>(dst) + 0.5f) * scale - 0.5f : static_cast<float>(dst) * scale;
    const float f = std::floor(src);
    Lerp l;
    l.lo = std::max<i64>(static_cast<i64>(f), 0);
    l.hi = std::min<i64>(static_cast<i64>(std::ceil(src)), in - 1);
    l.lo = std::min(l.lo, in - 1);
    l.hi = std::max<i64>(l.hi, 0);
    l.t = src - f;
    return l;
}

}  // namespace

void pad_nd(const float* x, float* y, const std::int64_t* in_shape, const std::int64_t* out_shape,
            const std::int64_t* begin, int rank) {
    if (rank <= 0) {
        y[0] = x[0];
        return;
    }
    PadDims d{in_shape, out_shape, begin, {}, {}, rank};
    i64 is = 1, os = 1;
    for (int i = rank - 1; i >= 0; --i) {
        d.in_stride[i] = is, d.out_stride[i] = os;
        is *= in_shape[i], os *= out_shape[i];
    }
    if (os == 0) return;
    pad_rec(d, 0, x, y);
}

void upsample_nearest(const float* x, float* y, const std::int64_t* in_shape, const std::int64_t* factors, int rank) {
    if (rank <= 0) {
        y[0] = x[0];
        return;
    }
    i64 in_stride[8], out_stride[8];
    i64 is = 1, os = 1;
    for (int i = rank - 1; i >= 0; --i) {
        in_stride[i] = is, out_stride[i] = os;
        is *= in_shape[i], os *= in_shape[i] * factors[i];
    }
    if (os == 0) return;
    up_rec(in_shape, factors, rank, in_stride, out_stride, 0, x, y);
}

void resize_bilinear_nhwc(const float* x, float* y, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                          std::int64_t oh, std::int64_t ow, bool half_pixel) {
    for (i64 b = 0; b < n; ++b) {
        const float* xb = x + b * h * w * c;
        for (i64 i = 0; i < oh; ++i) {
            const Lerp ly = lerp_of(i, h, oh, half_pixel);
            const float* top = xb + ly.lo * w * c;
            const float* bot = xb + ly.hi * w * c;
            for (i64 j = 0; j < ow; ++j) {
                const Lerp lx = lerp_of(j, w, ow, half_pixel);
                float* yp = y + ((b * oh + i) * ow + j) * c;
                const float* tl = top + lx.lo * c;
                const float* tr = top + lx.hi * c;
                const float* bl = bot + lx.lo * c;
                const float* br = bot + lx.hi * c;
                for (i64 k = 0; k < c; ++k) {
                    const float t = tl[k] + (tr[k] - tl[k]) * lx.t;
                    const float u = bl[k] + (br[k] - bl[k]) * lx.t;
                    yp[k] = t + (u - t) * ly.t;
                }
            }
        }
    }
}

}  // namespace graft::cpu
