// graft_rt/pool.hpp - pooling windows over NDHWC and reductions of a middle axis.
#pragma once

#include <algorithm>
#include <cstring>

#include "graft_rt/core.hpp"

namespace graft_rt {

/// The geometry of a pooling over NDHWC windows (2-D: d = kd = od = 1). Padding is explicit
/// (leading; the rest follows from the output size). Tap k of a window reads position
/// start + k * dilation.
struct PoolParams {
    i64 n, d, h, w, c;
    i64 kd, kh, kw;
    i64 stride_d, stride_h, stride_w;
    i64 pad_front, pad_top, pad_left;
    i64 od, oh, ow;
    i64 dil_d = 1, dil_h = 1, dil_w = 1;
};

/// One axis of the window of output position o: its first input position (negative in the
/// leading padding) and the taps [lo, hi) that fall inside the input (none when lo >= hi).
struct WindowSpan {
    i64 start, lo, hi;
};

inline WindowSpan window_span(i64 o, i64 stride, i64 pad, i64 k, i64 size, i64 dil = 1) {
    const i64 start = o * stride - pad;
    if (dil == 1) return {start, std::max<i64>(0, -start), std::min(k, size - start)};
    // Taps k with 0 <= start + k * dil < size: from ceil(-start / dil) to ceil((size - start) / dil).
    const i64 lo = start < 0 ? (-start + dil - 1) / dil : 0;
    const i64 hi = size > start ? std::min(k, (size - start + dil - 1) / dil) : 0;
    return {start, lo, hi};
}

/// Calls f(n, out, d, h, w) for every output window: n its batch index, out its offset in the
/// NDHWC output (times c), d, h, w its WindowSpan along each spatial axis.
template <class F>
inline void for_each_window(const PoolParams& p, F f) {
    for (i64 n = 0; n < p.n; ++n)
        for (i64 od = 0; od < p.od; ++od) {
            const WindowSpan d = window_span(od, p.stride_d, p.pad_front, p.kd, p.d, p.dil_d);
            for (i64 oh = 0; oh < p.oh; ++oh) {
                const WindowSpan h = window_span(oh, p.stride_h, p.pad_top, p.kh, p.h, p.dil_h);
                for (i64 ow = 0; ow < p.ow; ++ow)
                    f(n, (((n * p.od + od) * p.oh + oh) * p.ow + ow) * p.c, d, h,
                      window_span(ow, p.stride_w, p.pad_left, p.kw, p.w, p.dil_w));
            }
        }
}

/// Max or average pooling over NDHWC windows. Average pooling divides by the number of taps in
/// range (TF / Keras); a window entirely in the padding gives 0.
inline void pool_ndhwc(const float* x, float* y, const PoolParams& p, bool max) {
    for_each_window(p, [&](i64 n, i64 out, const WindowSpan& d, const WindowSpan& h, const WindowSpan& w) {
        float* yp = y + out;
        const i64 taps = std::max<i64>(d.hi - d.lo, 0) * std::max<i64>(h.hi - h.lo, 0) * std::max<i64>(w.hi - w.lo, 0);
        if (taps == 0) {
            std::memset(yp, 0, bytes(p.c));
            return;
        }
        bool first = true;
        for (i64 kd = d.lo; kd < d.hi; ++kd)
            for (i64 kh = h.lo; kh < h.hi; ++kh)
                for (i64 kw = w.lo; kw < w.hi; ++kw) {
                    const float* xp = x + ((((n * p.d) + d.start + kd * p.dil_d) * p.h + h.start + kh * p.dil_h) * p.w + w.start + kw * p.dil_w) * p.c;
                    if (first) std::memcpy(yp, xp, bytes(p.c));
                    else if (max) for (i64 j = 0; j < p.c; ++j) yp[j] = xp[j] > yp[j] ? xp[j] : yp[j];
                    else for (i64 j = 0; j < p.c; ++j) yp[j] += xp[j];
                    first = false;
                }
        if (!max)
            for (i64 j = 0; j < p.c; ++j) yp[j] /= static_cast<float>(taps);
    });
}

/// The position of each window's maximum (the first, in window order, when several are equal):
/// ONNX MaxPool's Indices, as the flat index into x read in N, C, D, H, W order (column_major:
/// N, C, then W, H, D, ONNX's storage_order 1), written as exact float32 values (x must have at
/// most 2^24 elements). A window entirely in the padding gives -1.
inline void pool_argmax_ndhwc(const float* x, float* idx, const PoolParams& p, bool column_major) {
    const i64 spatial = p.d * p.h * p.w;
    for_each_window(p, [&](i64 n, i64 out, const WindowSpan& ds, const WindowSpan& hs, const WindowSpan& ws) {
        for (i64 c = 0; c < p.c; ++c) {
            float best = 0.f;
            i64 where = -1;
            for (i64 kd = ds.lo; kd < ds.hi; ++kd)
                for (i64 kh = hs.lo; kh < hs.hi; ++kh)
                    for (i64 kw = ws.lo; kw < ws.hi; ++kw) {
                        const i64 d = ds.start + kd * p.dil_d, h = hs.start + kh * p.dil_h, w = ws.start + kw * p.dil_w;
                        const float v = x[(((n * p.d + d) * p.h + h) * p.w + w) * p.c + c];
                        if (where >= 0 && !(v > best)) continue;
                        best = v;
                        where = (n * p.c + c) * spatial + (column_major ? (w * p.h + h) * p.d + d : (d * p.h + h) * p.w + w);
                    }
            idx[out + c] = static_cast<float>(where);
        }
    });
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
