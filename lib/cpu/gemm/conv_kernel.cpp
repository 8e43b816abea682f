#include "cpu/gemm/conv_kernel.hpp"

#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/winograd.hpp"

namespace graft::cpu::gemm {

std::unique_ptr<Kernel> make_conv2d_kernel(BuildContext& b, const Conv2DParams& p, const std::vector<float>& w,
                                           Slot x, std::optional<Slot> bias, std::optional<Slot> residual, Slot y,
                                           const ActParams& act) {
    // 3x3 stride-1 convolutions large enough to pay (GRAFT_WINOGRAD=0 disables): Winograd.
    if (const int tile = Winograd::choose(p)) return make_winograd_kernel(b, p, tile, w, x, bias, residual, y, act);
    const std::int64_t K = p.kh * p.kw * p.cin, N = p.cout;
    BMatrix wm;
    wm.data = b.keep(std::make_shared<const std::vector<float>>(pack_b(w.data(), N, K, N)));
    wm.packed = true;
    return native::make_kernel([=](const RunContext& c) {
        Epilogue e;
        e.bias = bias ? c.at(*bias) : nullptr;
        if (residual) {
            e.residual = c.at(*residual);
            e.ldr = p.cout;
        }
        e.act = &act;
        conv2d(p, c.at(x), wm, c.at(y), e, c.pool);
    });
}

}  // namespace graft::cpu::gemm
