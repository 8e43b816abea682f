// graft_rt/pool.hpp - pooling windows over NDHWC and reductions of a middle axis.
#pragma once

#include <algorithm>
#include <cstring>

#include "graft_rt/core.hpp"

namespace graft_rt {

/// The geometry of a pooling over NDHWC windows (2-D: d = kd = od = 1). Padding is explicit
/// (leading; the rest follows from the output size).
struct PoolParams {
    i64 n, d, h, w, c;
    i64 kd, kh, kw;
    i64 stride_d, stride_h, stride_w;
    i64 pad_front, pad_top, pad_left;
    i64 od, oh, ow;
};

/// Max or average pooling over NDHWC windows. Average pooling divides by the number of taps in
/// range (TF / Keras); a window entirely in the padding gives 0.
inline void pool_ndhwc(const float* x, float* y, const PoolParams& p, bool max) {
    for (i64 n = 0; n < p.n; ++n)
        for (i64 od = 0; od < p.od; ++od) {
            const i64 d0 = od * p.stride_d - p.pad_front;
            const i64 kd_lo = std::max<i64>(0, -d0), kd_hi = std::min(p.kd, p.d - d0);
            for (i64 oh = 0; oh < p.oh; ++oh) {
                const i64 h0 = oh * p.stride_h - p.pad_top;
                const i64 kh_lo = std::max<i64>(0, -h0), kh_hi = std::min(p.kh, p.h - h0);
                for (i64 ow = 0; ow < p.ow; ++ow) {
                    const i64 w0 = ow * p.stride_w - p.pad_left;
                    const i64 kw_lo = std::max<i64>(0, -w0), kw_hi = std::min(p.kw, p.w - w0);
                    float* yp = y + (((n * p.od + od) * p.oh + oh) * p.ow + ow) * p.c;
                    const i64 taps = std::max<i64>(kd_hi - kd_lo, 0) * std::max<i64>(kh_hi - kh_lo, 0) *
                                     std::max<i64>(kw_hi - kw_lo, 0);
                    if (taps == 0) {
                        std::memset(yp, 0, bytes(p.c));
                        continue;
                    }
                    bool first = true;
                    for (i64 kd = kd_lo; kd < kd_hi; ++kd)
                        for (i64 kh = kh_lo; kh < kh_hi; ++kh)
                            for (i64 kw = kw_lo; kw < kw_hi; ++kw) {
                                const float* xp = x + ((((n * p.d) + d0 + kd) * p.h + h0 + kh) * p.w + w0 + kw) * p.c;
                                if (first) std::memcpy(yp, xp, bytes(p.c));
                                else if (max) for (i64 j = 0; j < p.c; ++j) yp[j] = xp[j] > yp[j] ? xp[j] : yp[j];
                                else for (i64 j = 0; j < p.c; ++j) yp[j] += xp[j];
                                first = false;
                            }
                    if (!max)
                        for (i64 j = 0; j < p.c; ++j) yp[j] /= static_cast<float>(taps);
                }
            }
        }
}

/// y [outer, inner] = max or mean over the middle axis of x [outer, mid, inner]; mid = 0 gives 0.
inline void reduce_mid(const float* x, float* y, i64 outer, i64 mid, i64 inner, bool max) {
    for (i64 o = 0; o < outer; ++o) {
        const float* xo = x + o * mid * inner;
        float* yo = y + o * inner;
        if (mid <= 0) {
            std::memset(yo, 0, bytes(inner));
            continue;
        }
        std::memcpy(yo, xo, bytes(inner));
        for (i64 m = 1; m < mid; ++m) {
            const float* xm = xo + m * inner;
            if (max) for (i64 j = 0; j < inner; ++j) yo[j] = xm[j] > yo[j] ? xm[j] : yo[j];
            else for (i64 j = 0; j < inner; ++j) yo[j] += xm[j];
        }
        if (!max)
            for (i64 j = 0; j < inner; ++j) yo[j] /= static_cast<float>(mid);
    }
}

}  // namespace graft_rt
