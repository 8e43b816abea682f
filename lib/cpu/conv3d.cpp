// 3-D convolution (implicit GEMM over NDHWC, one output row at a time).
#include <algorithm>
#include <cstring>

#include "cpu/internal.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;

inline std::size_t bytes(i64 n) { return static_cast<std::size_t>(n) * sizeof(float); }
inline i64 ceil_div_pos(i64 a, i64 b) { return (a + b - 1) / b; }  // a >= 0, b > 0

/// Output positions o in [0, out) whose input coordinate o*stride + offset lies in [0, in).
inline void valid_range(i64 offset, i64 stride, i64 in, i64 out, i64& lo, i64& hi) {
    lo = offset >= 0 ? 0 : ceil_div_pos(-offset, stride);
    const i64 last = in - 1 - offset;
    hi = last < 0 ? 0 : std::min(out, last / stride + 1);
    if (lo > hi) lo = hi;
}

}  // namespace

void conv3d_ndhwc(const float* x, const float* w, const float* bias, float* y, const Conv3DParams& p,
                  const ActParams& a) {
    const i64 cin = p.cin, cout = p.cout;
    const i64 row = p.ow * cout;
    if (row <= 0) return;
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.d * p.h * p.w * cin;
        for (i64 od = 0; od < p.od; ++od) {
            for (i64 oh = 0; oh < p.oh; ++oh) {
                float* yr = y + ((n * p.od + od) * p.oh + oh) * row;
                if (bias)
                    for (i64 ow = 0; ow < p.ow; ++ow) std::memcpy(yr + ow * cout, bias, bytes(cout));
                else
                    std::memset(yr, 0, bytes(row));
                for (i64 kd = 0; kd < p.kd; ++kd) {
                    const i64 id = od * p.stride_d - p.pad_front + kd * p.dil_d;
                    if (id < 0 || id >= p.d) continue;
                    for (i64 kh = 0; kh < p.kh; ++kh) {
                        const i64 ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                        if (ih < 0 || ih >= p.h) continue;
                        for (i64 kw = 0; kw < p.kw; ++kw) {
                            const i64 offset = kw * p.dil_w - p.pad_left;
                            i64 lo, hi;
                            valid_range(offset, p.stride_w, p.w, p.ow, lo, hi);
                            if (lo >= hi) continue;
                            const float* xs = xn + ((id * p.h + ih) * p.w + lo * p.stride_w + offset) * cin;
                            const float* ws = w + ((kd * p.kh + kh) * p.kw + kw) * cin * cout;
                            detail::gemm(xs, p.stride_w * cin, ws, cout, yr + lo * cout, cout, hi - lo, cin, cout, nullptr,
                                         true, nullptr);
                        }
                    }
                }
                if (a.kind != Act::linear) activate(yr, yr, row, a);
            }
        }
    }
}

}  // namespace graft::cpu
