// graft_rt/local.hpp - the locally connected 2-D layer over NHWC (Keras LocallyConnected1D/2D; 1-D
// is h = 1): a convolution whose kernel differs at every output position.
#pragma once

#include "graft_rt/core.hpp"

namespace graft_rt {

/// x NHWC [n, h, w, cin], w [oh, ow, kh, kw, cin, cout] (one kernel per output position), bias
/// [oh, ow, cout] or null, y NHWC [n, oh, ow, cout]. The window of output (i, j) starts at input
/// (i * stride_h - pad_top, j * stride_w - pad_left); taps outside the input read zero.
struct LocalConvParams {
    i64 n, h, w, cin;
    i64 kh, kw, cout;
    i64 stride_h, stride_w;
    i64 pad_top, pad_left;
    i64 oh, ow;
};

/// y = the locally connected product of x and w, plus bias. Output positions outermost, so each
/// position's kernel is read once for the whole batch.
inline void local_conv2d_nhwc(const float* x, const float* w, const float* bias, float* y, const LocalConvParams& p) {
    const i64 tap = p.cin * p.cout;  // the floats of one kernel tap
    for (i64 i = 0; i < p.oh; ++i)
        for (i64 j = 0; j < p.ow; ++j) {
            const i64 pos = i * p.ow + j;
            const float* wp = w + pos * p.kh * p.kw * tap;
            for (i64 n = 0; n < p.n; ++n) {
                float* yp = y + ((n * p.oh + i) * p.ow + j) * p.cout;
                for (i64 f = 0; f < p.cout; ++f) yp[f] = bias ? bias[pos * p.cout + f] : 0.f;
                for (i64 a = 0; a < p.kh; ++a) {
                    const i64 ih = i * p.stride_h - p.pad_top + a;
                    if (ih < 0 || ih >= p.h) continue;
                    for (i64 b = 0; b < p.kw; ++b) {
                        const i64 iw = j * p.stride_w - p.pad_left + b;
                        if (iw < 0 || iw >= p.w) continue;
                        const float* xp = x + ((n * p.h + ih) * p.w + iw) * p.cin;
                        const float* wt = wp + (a * p.kw + b) * tap;
                        for (i64 c = 0; c < p.cin; ++c) {
                            const float v = xp[c];
                            const float* wr = wt + c * p.cout;
                            for (i64 f = 0; f < p.cout; ++f) yp[f] += v * wr[f];
                        }
                    }
                }
            }
        }
}

}  // namespace graft_rt
