// graft_rt/conv_transpose.hpp - transposed convolution over NDHWC (Keras Conv1D/2D/3DTranspose),
// computed as a gather: every output pixel sums the taps that reach it, so there is no scatter and
// no zeroing pass.
#pragma once

#include <algorithm>

#include "graft_rt/act.hpp"
#include "graft_rt/conv.hpp"
#include "graft_rt/core.hpp"

namespace graft_rt {

/// The geometry of a transposed convolution has the fields of a convolution's: x NDHWC
/// [n, d, h, w, cin], w [kd, kh, kw, cout, cin] (Keras Conv3DTranspose), y NDHWC
/// [n, od, oh, ow, cout]; 2-D and 1-D are d = kd = od = 1 (and h = kh = oh = 1). The pads are the
/// leading ones of the output: y[o] = bias + sum over taps k and inputs i with
/// i * stride - pad + k * dil == o of w[k] . x[i].
using ConvTransposeParams = Conv3DParams;

/// A tap k of one axis and the input position i it reads.
struct Tap {
    i64 k, i;
};
constexpr int kMaxTaps = 64;  // taps listed at once; longer kernels go in chunks

/// The taps k < k_n (and inputs i) with i * stride - pad + k * dil == o along one axis, into `out`
/// (k_n <= kMaxTaps); returns how many.
inline int taps_reaching(i64 o, i64 pad, i64 k_n, i64 stride, i64 dil, i64 in, Tap* out) {
    int n = 0;
    for (i64 k = 0; k < k_n; ++k) {
        const i64 t = o + pad - k * dil;
        if (t < 0 || t % stride != 0) continue;
        const i64 i = t / stride;
        if (i >= in) continue;
        out[n++] = {k, i};
    }
    return n;
}

/// y = conv_transpose(x, w) + bias (bias [cout] or null), then row_done(yr, floats) on every
/// output row (e.g. RowActivation).
template <class RowDone>
inline void conv_transpose_ndhwc(const float* x, const float* w, const float* bias, float* y,
                                 const ConvTransposeParams& p, const RowDone& row_done) {
    const i64 cin = p.cin, cout = p.cout;
    Tap td[kMaxTaps], th[kMaxTaps], tw[kMaxTaps];
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.d * p.h * p.w * cin;
        for (i64 od = 0; od < p.od; ++od)
            for (i64 oh = 0; oh < p.oh; ++oh) {
                float* yr = y + ((n * p.od + od) * p.oh + oh) * p.ow * cout;
                fill_bias(yr, bias, p.ow, cout);
                for (i64 ow = 0; ow < p.ow; ++ow) {
                    float* yp = yr + ow * cout;
                    for (i64 kd0 = 0; kd0 < p.kd; kd0 += kMaxTaps) {
                        const int nd = taps_reaching(od, p.pad_front - kd0 * p.dil_d,
                                                     std::min<i64>(kMaxTaps, p.kd - kd0), p.stride_d, p.dil_d, p.d, td);
                        for (int a_d = 0; a_d < nd; ++a_d) {
                            const i64 kd = td[a_d].k + kd0, id = td[a_d].i;
                            for (i64 kh0 = 0; kh0 < p.kh; kh0 += kMaxTaps) {
                                const int nh =
                                    taps_reaching(oh, p.pad_top - kh0 * p.dil_h, std::min<i64>(kMaxTaps, p.kh - kh0),
                                                  p.stride_h, p.dil_h, p.h, th);
                                for (int a_h = 0; a_h < nh; ++a_h) {
                                    const i64 kh = th[a_h].k + kh0, ih = th[a_h].i;
                                    for (i64 kw0 = 0; kw0 < p.kw; kw0 += kMaxTaps) {
                                        const int nw = taps_reaching(ow, p.pad_left - kw0 * p.dil_w,
                                                                     std::min<i64>(kMaxTaps, p.kw - kw0), p.stride_w,
                                                                     p.dil_w, p.w, tw);
                                        for (int a_w = 0; a_w < nw; ++a_w) {
                                            const i64 kw = tw[a_w].k + kw0, iw = tw[a_w].i;
                                            const float* xp = xn + ((id * p.h + ih) * p.w + iw) * cin;
                                            const float* wk = w + ((kd * p.kh + kh) * p.kw + kw) * cout * cin;
                                            for (i64 co = 0; co < cout; ++co) {
                                                const float* wr = wk + co * cin;
                                                float acc = 0.f;
                                                for (i64 ci = 0; ci < cin; ++ci) acc += wr[ci] * xp[ci];
                                                yp[co] += acc;
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                row_done(yr, p.ow * cout);
            }
    }
}

/// y = act(conv_transpose(x, w) + bias).
inline void conv_transpose_ndhwc(const float* x, const float* w, const float* bias, float* y,
                                 const ConvTransposeParams& p, const ActParams& act) {
    conv_transpose_ndhwc(x, w, bias, y, p, RowActivation{act});
}

}  // namespace graft_rt
