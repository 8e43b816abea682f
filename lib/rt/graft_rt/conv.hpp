// graft_rt/conv.hpp - convolutions over channels-last inputs as matrix products (Conv1D is 2-D
// with h = 1, 2-D is 3-D with d = 1): their geometry, and the direct loop the native backend runs
// on its own GEMM (conv_rows).
#pragma once

#include <algorithm>
#include <cstring>

#include "graft_rt/act.hpp"
#include "graft_rt/core.hpp"
#include "graft_rt/gemm.hpp"

namespace graft_rt {

/// The geometry of a 2-D convolution: x NHWC [n, h, w, cin], w the Keras kernel [kh, kw, cin, cout]
/// (viewed as a [kh*kw*cin, cout] matrix), y NHWC [n, oh, ow, cout]; 1-D: h = kh = oh = 1.
/// Padding is explicit: the leading pads; the rest follows from the output size. Out-of-range
/// taps read zero.
struct Conv2DParams {
    i64 n, h, w, cin;
    i64 kh, kw, cout;
    i64 stride_h, stride_w, dil_h, dil_w;
    i64 pad_top, pad_left;
    i64 oh, ow;
};

/// The same in 3-D: x NDHWC [n, d, h, w, cin], w [kd, kh, kw, cin, cout], y [n, od, oh, ow, cout].
struct Conv3DParams {
    i64 n, d, h, w, cin;
    i64 kd, kh, kw, cout;
    i64 stride_d, stride_h, stride_w, dil_d, dil_h, dil_w;
    i64 pad_front, pad_top, pad_left;
    i64 od, oh, ow;
};

/// A 2-D geometry as 3-D (d = kd = od = 1).
inline Conv3DParams as_3d(const Conv2DParams& p) {
    return {p.n,        1, p.h,     p.w,     p.cin, 1,         p.kh,       p.kw, p.cout, 1,   p.stride_h,
            p.stride_w, 1, p.dil_h, p.dil_w, 0,     p.pad_top, p.pad_left, 1,    p.oh,   p.ow};
}

/// A 1x1 convolution with nothing skipped or padded: one matrix product over all pixels.
inline bool is_pointwise(const Conv2DParams& p) {
    return p.kh == 1 && p.kw == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
           p.oh == p.h && p.ow == p.w;
}

/// Output positions o in [0, out) whose input coordinate o * stride + offset lies in [0, in): [lo, hi).
inline void valid_range(i64 offset, i64 stride, i64 in, i64 out, i64& lo, i64& hi) {
    lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
    const i64 last = in - 1 - offset;
    hi = last < 0 ? 0 : std::min(out, last / stride + 1);
    if (lo > hi) lo = hi;
}

/// Every output pixel of a row starts from the bias (or zero).
inline void fill_bias(float* y, const float* bias, i64 pixels, i64 channels) {
    if (!bias) {
        std::memset(y, 0, bytes(pixels * channels));
        return;
    }
    for (i64 i = 0; i < pixels; ++i) std::memcpy(y + i * channels, bias, bytes(channels));
}

/// The row epilogue of the kernels here: the activation over a finished output row.
struct RowActivation {
    ActParams act;
    void operator()(float* y, i64 n) const {
        if (act.kind != Act::linear) activation(y, y, n, act);
    }
};

/// The direct convolution, one output row (n, od, oh) at a time: the row starts from the bias,
/// then every tap (kd, kh, kw) in range adds the product of the input pixels it reads and its
/// weights,
///     tap_product(tap, xs, ldx, rows, yr):  yr [rows, cout] += xs [rows, cin] . w_tap [cin, cout]
/// with xs's rows ldx floats apart and tap = (kd * p.kh + kh) * p.kw + kw numbering the kernel's
/// [cin, cout] blocks; then row_done(yr, floats) finishes the row (e.g. RowActivation).
template <class TapProduct, class RowDone>
inline void conv_rows(const float* x, const float* bias, float* y, const Conv3DParams& p, const TapProduct& tap_product,
                      const RowDone& row_done) {
    const i64 row = p.ow * p.cout;  // floats per output row
    if (row <= 0) return;
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.d * p.h * p.w * p.cin;
        for (i64 od = 0; od < p.od; ++od)
            for (i64 oh = 0; oh < p.oh; ++oh) {
                float* yr = y + ((n * p.od + od) * p.oh + oh) * row;
                fill_bias(yr, bias, p.ow, p.cout);
                for (i64 kd = 0; kd < p.kd; ++kd) {
                    const i64 id = od * p.stride_d - p.pad_front + kd * p.dil_d;
                    if (id < 0 || id >= p.d) continue;
                    for (i64 kh = 0; kh < p.kh; ++kh) {
                        const i64 ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                        if (ih < 0 || ih >= p.h) continue;
                        for (i64 kw = 0; kw < p.kw; ++kw) {
                            // Output pixels ow in [lo, hi) read input pixels iw = ow * stride_w + offset:
                            // rows of x stride_w * cin floats apart.
                            const i64 offset = kw * p.dil_w - p.pad_left;
                            i64 lo, hi;
                            valid_range(offset, p.stride_w, p.w, p.ow, lo, hi);
                            if (lo >= hi) continue;
                            const float* xs = xn + ((id * p.h + ih) * p.w + lo * p.stride_w + offset) * p.cin;
                            tap_product((kd * p.kh + kh) * p.kw + kw, xs, p.stride_w * p.cin, hi - lo,
                                        yr + lo * p.cout);
                        }
                    }
                }
                row_done(yr, row);
            }
    }
}

/// The tap products of conv_rows on a kernel packed as one [taps*cin, cout] matrix (pack_panels).
struct PackedTaps {
    const float* w;
    i64 bps, cin, cout;  // bps: the packed matrix's panel stride, taps * cin * kPanel
    void operator()(i64 tap, const float* xs, i64 ldx, i64 rows, float* yr) const {
        gemm(rows, cout, cin, xs, ldx, w + tap * cin * kPanel, bps, yr, cout, nullptr, true);
    }
};

/// y = act(conv(x, w) + bias) over NHWC, w packed as a [kh*kw*cin, cout] matrix (an implicit
/// GEMM). With block_rows > 0 the patches of block_rows output rows are copied into `work`
/// (block_rows * ow * kh*kw*cin floats) and multiplied at once; otherwise every tap in range is a
/// product of strided input rows (conv_rows).
inline void conv2d_nhwc(const float* x, const float* w, const float* bias, float* y, const Conv2DParams& p,
                        const ActParams& act, i64 block_rows, float* work) {
    const i64 K = p.kh * p.kw * p.cin, bps = K * kPanel, row = p.ow * p.cout;
    if (is_pointwise(p)) {
        gemm(p.n * p.h * p.w, p.cout, p.cin, x, p.cin, w, bps, y, p.cout, bias, false);
        RowActivation{act}(y, p.n * p.oh * row);
        return;
    }
    if (block_rows <= 0) {
        conv_rows(x, bias, y, as_3d(p), PackedTaps{w, bps, p.cin, p.cout}, RowActivation{act});
        return;
    }
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.h * p.w * p.cin;
        for (i64 oh0 = 0; oh0 < p.oh; oh0 += block_rows) {
            const i64 rows = std::min(block_rows, p.oh - oh0);
            float* dst = work;
            for (i64 oh = oh0; oh < oh0 + rows; ++oh)
                for (i64 ow = 0; ow < p.ow; ++ow)
                    for (i64 kh = 0; kh < p.kh; ++kh) {
                        const i64 ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                        for (i64 kw = 0; kw < p.kw; ++kw, dst += p.cin) {
                            const i64 iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
                            if (ih >= 0 && ih < p.h && iw >= 0 && iw < p.w)
                                std::memcpy(dst, xn + (ih * p.w + iw) * p.cin, bytes(p.cin));
                            else
                                std::memset(dst, 0, bytes(p.cin));
                        }
                    }
            float* yr = y + (n * p.oh + oh0) * row;
            gemm(rows * p.ow, p.cout, K, work, K, w, bps, yr, p.cout, bias, false);
            RowActivation{act}(yr, rows * row);
        }
    }
}

/// y = act(conv(x, w) + bias) over NDHWC, w packed as a [kd*kh*kw*cin, cout] matrix; every tap in
/// range accumulates into an output row (conv_rows).
inline void conv3d_ndhwc(const float* x, const float* w, const float* bias, float* y, const Conv3DParams& p,
                         const ActParams& act) {
    const i64 bps = p.kd * p.kh * p.kw * p.cin * kPanel;
    conv_rows(x, bias, y, p, PackedTaps{w, bps, p.cin, p.cout}, RowActivation{act});
}

}  // namespace graft_rt
