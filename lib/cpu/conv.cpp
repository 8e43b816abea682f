// 2-D convolution (implicit GEMM over NHWC).
#include <algorithm>
#include <cstring>

#include "cpu/internal.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;

inline std::size_t bytes(i64 n) { return static_cast<std::size_t>(n) * sizeof(float); }
inline i64 ceil_div_pos(i64 a, i64 b) { return (a + b - 1) / b; }  // a >= 0, b > 0

/// Output positions o in [0, out) whose input coordinate o*stride + offset lies in [0, in):
/// returns [lo, hi) (empty when lo >= hi).
inline void valid_range(i64 offset, i64 stride, i64 in, i64 out, i64& lo, i64& hi) {
    lo = offset >= 0 ? 0 : ceil_div_pos(-offset, stride);
    const i64 last = in - 1 - offset;  // o*stride <= last
    hi = last < 0 ? 0 : std::min(out, last / stride + 1);
    if (lo > hi) lo = hi;
}

}  // namespace

void conv2d_nhwc(const float* x, const float* w, const float* bias, float* y, const Conv2DParams& p,
                 const ActParams& a) {
    const i64 cin = p.cin, cout = p.cout;
    const i64 row = p.ow * cout;  // floats per output row
    if (row <= 0) return;
    for (i64 n = 0; n < p.n; ++n) {
        const float* xn = x + n * p.h * p.w * cin;
        for (i64 oh = 0; oh < p.oh; ++oh) {
            float* yr = y + (n * p.oh + oh) * row;
            // Start from the bias, then accumulate every in-range tap as one strided GEMM:
            // the output pixels ow in [lo, hi) read input pixels iw = ow*stride_w + offset, which
            // are rows of x with stride stride_w*cin.
            if (bias)
                for (i64 ow = 0; ow < p.ow; ++ow) std::memcpy(yr + ow * cout, bias, bytes(cout));
            else
                std::memset(yr, 0, bytes(row));
            for (i64 kh = 0; kh < p.kh; ++kh) {
                const i64 ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                if (ih < 0 || ih >= p.h) continue;
                for (i64 kw = 0; kw < p.kw; ++kw) {
                    const i64 offset = kw * p.dil_w - p.pad_left;
                    i64 lo, hi;
                    valid_range(offset, p.stride_w, p.w, p.ow, lo, hi);
                    if (lo >= hi) continue;
                    const float* xs = xn + (ih * p.w + lo * p.stride_w + offset) * cin;
                    const float* ws = w + (kh * p.kw + kw) * cin * cout;
                    detail::gemm(xs, p.stride_w * cin, ws, cout, yr + lo * cout, cout, hi - lo, cin, cout,
                                 nullptr, true, nullptr);
                }
            }
            if (a.kind != Act::linear) activate(yr, yr, row, a);
        }
    }
}

}  // namespace graft::cpu
