// Convolution on the GEMM: graft_rt::conv_rows' loop, every tap a product of strided input rows
// and the tap's weights.
#include "cpu/internal.hpp"

namespace graft::cpu {
namespace {
using i64 = std::int64_t;
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

}  // namespace graft::cpu
