// graft_rt/resize.hpp - upsampling: nearest neighbour by integer factors (any layout) and
// bilinear resize of NHWC images (TF rules).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>

#include "graft_rt/core.hpp"
#include "graft_rt/shape.hpp"

namespace graft_rt {

/// upsample_nearest from axis `axis` on; strides are those of the axes of x and y (row-major).
inline void upsample_axis(const float* x, float* y, const i64* in_shape, const i64* factors, const i64* in_stride,
                          const i64* out_stride, int rank, int axis) {
    const i64 n = in_shape[axis], f = factors[axis];
    if (axis == rank - 1) {
        if (f == 1) std::memcpy(y, x, bytes(n));
        else
            for (i64 i = 0; i < n; ++i) std::fill(y + i * f, y + (i + 1) * f, x[i]);
        return;
    }
    const i64 os = out_stride[axis];
    for (i64 i = 0; i < n; ++i) {
        float* first = y + i * f * os;
        upsample_axis(x + i * in_stride[axis], first, in_shape, factors, in_stride, out_stride, rank, axis + 1);
        for (i64 r = 1; r < f; ++r) std::memcpy(first + r * os, first, bytes(os));
    }
}

/// Nearest-neighbour upsampling by integer factors: y[j] = x[j / factor] along every axis; y's
/// shape is in_shape * factors (rank <= max_rank).
inline void upsample_nearest(const float* x, float* y, const i64* in_shape, const i64* factors, int rank) {
    if (rank <= 0) {
        y[0] = x[0];
        return;
    }
    i64 out_shape[max_rank], in_stride[max_rank], out_stride[max_rank];
    for (int i = 0; i < rank; ++i) out_shape[i] = in_shape[i] * factors[i];
    if (strides_of(in_shape, out_shape, rank, in_stride, out_stride))
        upsample_axis(x, y, in_shape, factors, in_stride, out_stride, rank, 0);
}

/// The two source positions of an output position and the weight of the second.
struct Lerp {
    i64 lo, hi;
    float t;
};
/// Source position of output `dst` (TF rules): dst * in/out, or with half_pixel
/// (dst + 0.5) * in/out - 0.5; clamped to the image.
inline Lerp lerp_of(i64 dst, i64 in, i64 out, bool half_pixel) {
    const float scale = static_cast<float>(in) / static_cast<float>(out);
    const float src = half_pixel ? (static_cast<float>(dst) + 0.5f) * scale - 0.5f : static_cast<float>(dst) * scale;
    const float f = std::floor(src);
    Lerp l;
    l.lo = std::min(std::max<i64>(static_cast<i64>(f), 0), in - 1);
    l.hi = std::max<i64>(std::min<i64>(static_cast<i64>(std::ceil(src)), in - 1), 0);
    l.t = src - f;
    return l;
}

/// Bilinear resize of NHWC images [n, h, w, c] to [n, oh, ow, c], no corner alignment: TF 1
/// resize_bilinear (half_pixel false) or TF 2 tf.image.resize (half_pixel true).
inline void resize_bilinear_nhwc(const float* x, float* y, i64 n, i64 h, i64 w, i64 c, i64 oh, i64 ow, bool half_pixel) {
    for (i64 b = 0; b < n; ++b) {
        const float* xb = x + b * h * w * c;
        for (i64 i = 0; i < oh; ++i) {
            const Lerp ly = lerp_of(i, h, oh, half_pixel);
            const float* top = xb + ly.lo * w * c;
            const float* bottom = xb + ly.hi * w * c;
            for (i64 j = 0; j < ow; ++j) {
                const Lerp lx = lerp_of(j, w, ow, half_pixel);
                const float* tl = top + lx.lo * c;
                const float* tr = top + lx.hi * c;
                const float* bl = bottom + lx.lo * c;
                const float* br = bottom + lx.hi * c;
                float* yp = y + ((b * oh + i) * ow + j) * c;
                for (i64 k = 0; k < c; ++k) {
                    const float t = tl[k] + (tr[k] - tl[k]) * lx.t;
                    const float u = bl[k] + (br[k] - bl[k]) * lx.t;
                    yp[k] = t + (u - t) * ly.t;
                }
            }
        }
    }
}

}  // namespace graft_rt
