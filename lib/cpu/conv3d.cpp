// 3-D pooling (3-D convolution: conv.cpp).
#include <algorithm>
#include <cstring>

#include "cpu/internal.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;

inline std::size_t bytes(i64 n) { return static_cast<std::size_t>(n) * sizeof(float); }
}  // namespace

void pool3d_ndhwc(const float* x, float* y, const Pool3DParams& p, Pool kind) {
    const i64 c = p.c;
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.d * p.h * p.w * c;
        for (i64 od = 0; od < p.od; ++od) {
            const i64 d0 = od * p.stride_d - p.pad_front;
            const i64 kd_lo = std::max<i64>(0, -d0), kd_hi = std::min(p.kd, p.d - d0);
            for (i64 oh = 0; oh < p.oh; ++oh) {
                const i64 h0 = oh * p.stride_h - p.pad_top;
                const i64 kh_lo = std::max<i64>(0, -h0), kh_hi = std::min(p.kh, p.h - h0);
                for (i64 ow = 0; ow < p.ow; ++ow) {
                    const i64 w0 = ow * p.stride_w - p.pad_left;
                    const i64 kw_lo = std::max<i64>(0, -w0), kw_hi = std::min(p.kw, p.w - w0);
                    float* yp = y + (((n * p.od + od) * p.oh + oh) * p.ow + ow) * c;
                    if (kd_lo >= kd_hi || kh_lo >= kh_hi || kw_lo >= kw_hi) {
                        std::memset(yp, 0, bytes(c));
                        continue;
                    }
                    bool first = true;
                    for (i64 kd = kd_lo; kd < kd_hi; ++kd)
                        for (i64 kh = kh_lo; kh < kh_hi; ++kh)
                            for (i64 kw = kw_lo; kw < kw_hi; ++kw) {
                                const float* xp = xn + (((d0 + kd) * p.h + (h0 + kh)) * p.w + (w0 + kw)) * c;
                                if (first) {
                                    std::memcpy(yp, xp, bytes(c));
                                    first = false;
                                } else if (kind == Pool::max) {
                                    for (i64 j = 0; j < c; ++j) yp[j] = xp[j] > yp[j] ? xp[j] : yp[j];
                                } else {
                                    for (i64 j = 0; j < c; ++j) yp[j] += xp[j];
                                }
                            }
                    if (kind == Pool::avg) {
                        const float count = static_cast<float>((kd_hi - kd_lo) * (kh_hi - kh_lo) * (kw_hi - kw_lo));
                        for (i64 j = 0; j < c; ++j) yp[j] /= count;
                    }
                }
            }
        }
    }
}

}  // namespace graft::cpu
