// Transposed convolution over NDHWC (Keras Conv1D/2D/3DTranspose), computed as a gather: every
// output pixel sums the taps that reach it, so no scatter and no output zeroing pass.
#include <algorithm>
#include <cstring>

#include "cpu/internal.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;

/// Taps k (and input positions i) with i*stride - pad + k*dil == o along one axis.
struct Tap {
    i64 k, i;
};
inline int taps(i64 o, i64 pad, i64 k_n, i64 stride, i64 dil, i64 in, Tap* out) {
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

constexpr int kMaxTaps = 64;

}  // namespace

void conv_transpose3d_ndhwc(const float* x, const float* w, const float* bias, float* y,
                            const ConvTransposeParams& p, const ActParams& a) {
    const i64 cin = p.cin, cout = p.cout;
    // At most kernel-size taps per axis; longer kernels are handled in chunks of kMaxTaps.
    Tap td[kMaxTaps], th[kMaxTaps], tw[kMaxTaps];
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.d * p.h * p.w * cin;
        for (i64 od = 0; od < p.od; ++od) {
            for (i64 oh = 0; oh < p.oh; ++oh) {
                float* yr = y + ((n * p.od + od) * p.oh + oh) * p.ow * cout;
                for (i64 ow = 0; ow < p.ow; ++ow) {
                    float* yp = yr + ow * cout;
                    if (bias)
                        std::memcpy(yp, bias, static_cast<std::size_t>(cout) * sizeof(float));
                    else
                        std::fill(yp, yp + cout, 0.f);
                    for (i64 kd0 = 0; kd0 < p.kd; kd0 += kMaxTaps) {
                        const int nd = taps(od, p.pad_front - kd0 * p.dil_d, std::min<i64>(kMaxTaps, p.kd - kd0), p.stride_d,
                                            p.dil_d, p.d, td);
                        for (int a_d = 0; a_d < nd; ++a_d) {
                            const i64 kd = td[a_d].k + kd0, id = td[a_d].i;
                            for (i64 kh0 = 0; kh0 < p.kh; kh0 += kMaxTaps) {
                                const int nh = taps(oh, p.pad_top - kh0 * p.dil_h, std::min<i64>(kMaxTaps, p.kh - kh0),
                                                    p.stride_h, p.dil_h, p.h, th);
                                for (int a_h = 0; a_h < nh; ++a_h) {
                                    const i64 kh = th[a_h].k + kh0, ih = th[a_h].i;
                                    for (i64 kw0 = 0; kw0 < p.kw; kw0 += kMaxTaps) {
                                        const int nw = taps(ow, p.pad_left - kw0 * p.dil_w, std::min<i64>(kMaxTaps, p.kw - kw0),
                                                            p.stride_w, p.dil_w, p.w, tw);
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
                if (a.kind != Act::linear) activate(yr, yr, p.ow * cout, a);
            }
        }
    }
}

}  // namespace graft::cpu
