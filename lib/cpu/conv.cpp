// Convolution on the GEMM (graft_rt::conv_rows' loop, every tap a product of strided input rows
// and the tap's weights) and middle-axis reductions (2-D pooling: pool.cpp).
#include <cstring>

#include "cpu/internal.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;

inline std::size_t bytes(i64 n) { return static_cast<std::size_t>(n) * sizeof(float); }

}  // namespace

void conv3d_ndhwc_unpacked(const float* x, const float* w, const float* bias, float* y, const Conv3DParams& p,
                           const ActParams& a) {
    const i64 cin = p.cin, cout = p.cout;
    graft_rt::conv_rows(
        x, bias, y, p,
        [&](i64 tap, const float* xs, i64 ldx, i64 rows, float* yr) {
            detail::gemm(xs, ldx, w + tap * cin * cout, cout, yr, cout, rows, cin, cout, nullptr, true, nullptr);
        },
        ActivateRows{a});
}

void reduce_mid(const float* x, float* y, std::int64_t outer, std::int64_t mid, std::int64_t inner, Pool kind) {
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
            if (kind == Pool::max)
                for (i64 j = 0; j < inner; ++j) yo[j] = xm[j] > yo[j] ? xm[j] : yo[j];
            else
                for (i64 j = 0; j < inner; ++j) yo[j] += xm[j];
        }
        if (kind == Pool::avg) {
            const float count = static_cast<float>(mid);
            for (i64 j = 0; j < inner; ++j) yo[j] /= count;
        }
    }
}

}  // namespace graft::cpu
