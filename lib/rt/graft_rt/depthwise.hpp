// graft_rt/depthwise.hpp - depthwise 2-D convolution over NHWC (Keras DepthwiseConv1D/2D; 1-D is
// h = 1).
#pragma once

#include "graft_rt/act.hpp"
#include "graft_rt/conv.hpp"
#include "graft_rt/core.hpp"

namespace graft_rt {

/// x NHWC [n, h, w, cin], w [kh, kw, cin, mult] (Keras), y NHWC [n, oh, ow, cin * mult] with
/// output channel c * mult + m. Padding explicit (leading pads), out-of-range taps read zero.
struct DepthwiseParams {
    i64 n, h, w, cin, mult;
    i64 kh, kw;
    i64 stride_h, stride_w, dil_h, dil_w;
    i64 pad_top, pad_left;
    i64 oh, ow;
};

/// y = conv(x, w) + bias (bias [cin * mult] or null), then row_done(yr, floats) on every output
/// row (e.g. RowActivation).
template <class RowDone>
inline void depthwise2d_nhwc(const float* x, const float* w, const float* bias, float* y, const DepthwiseParams& p,
                             const RowDone& row_done) {
    const i64 m = p.mult, cout = p.cin * m;
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.h * p.w * p.cin;
        for (i64 oh = 0; oh < p.oh; ++oh) {
            float* yr = y + (n * p.oh + oh) * p.ow * cout;
            fill_bias(yr, bias, p.ow, cout);
            for (i64 ow = 0; ow < p.ow; ++ow) {
                float* yp = yr + ow * cout;
                for (i64 kh = 0; kh < p.kh; ++kh) {
                    const i64 ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                    if (ih < 0 || ih >= p.h) continue;
                    for (i64 kw = 0; kw < p.kw; ++kw) {
                        const i64 iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
                        if (iw < 0 || iw >= p.w) continue;
                        const float* xp = xn + (ih * p.w + iw) * p.cin;
                        const float* wp = w + (kh * p.kw + kw) * cout;
                        if (m == 1) {
                            for (i64 c = 0; c < p.cin; ++c) yp[c] += xp[c] * wp[c];
                        } else {
                            for (i64 c = 0; c < p.cin; ++c)
                                for (i64 j = 0; j < m; ++j) yp[c * m + j] += xp[c] * wp[c * m + j];
                        }
                    }
                }
            }
            row_done(yr, p.ow * cout);
        }
    }
}

/// y = act(conv(x, w) + bias).
inline void depthwise2d_nhwc(const float* x, const float* w, const float* bias, float* y, const DepthwiseParams& p,
                             const ActParams& act) {
    depthwise2d_nhwc(x, w, bias, y, p, RowActivation{act});
}

}  // namespace graft_rt
