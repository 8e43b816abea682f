// Depthwise 2-D convolution over NHWC (Keras DepthwiseConv2D; 1-D is H = 1).
#include <algorithm>
#include <cstring>

#include "cpu/internal.hpp"

namespace graft::cpu {

void depthwise2d_nhwc(const float* x, const float* w, const float* bias, float* y, const DepthwiseParams& p,
                      const ActParams& a) {
    using i64 = std::int64_t;
    const i64 cin = p.cin, m = p.mult, cout = cin * m;
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.h * p.w * cin;
        for (i64 oh = 0; oh < p.oh; ++oh) {
            float* yr = y + (n * p.oh + oh) * p.ow * cout;
            for (i64 ow = 0; ow < p.ow; ++ow) {
                float* yp = yr + ow * cout;
                if (bias)
                    std::memcpy(yp, bias, static_cast<std::size_t>(cout) * sizeof(float));
                else
                    std::fill(yp, yp + cout, 0.f);
                for (i64 kh = 0; kh < p.kh; ++kh) {
                    const i64 ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                    if (ih < 0 || ih >= p.h) continue;
                    for (i64 kw = 0; kw < p.kw; ++kw) {
                        const i64 iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
                        if (iw < 0 || iw >= p.w) continue;
                        const float* xp = xn + (ih * p.w + iw) * cin;
                        const float* wp = w + (kh * p.kw + kw) * cout;
                        if (m == 1) {
                            for (i64 c = 0; c < cin; ++c) yp[c] += xp[c] * wp[c];
                        } else {
                            for (i64 c = 0; c < cin; ++c)
                                for (i64 j = 0; j < m; ++j) yp[c * m + j] += xp[c] * wp[c * m + j];
                        }
                    }
                }
            }
            if (a.kind != Act::linear) activate(yr, yr, p.ow * cout, a);
        }
    }
}

}  // namespace graft::cpu
