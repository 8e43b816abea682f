#include "cpu/gemm/conv_kernel.hpp"

#include <string>

#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/winograd.hpp"
#include "cpu/threadpool.hpp"

namespace graft::cpu::gemm {
namespace {

/// The epilogue of a run: the bias and residual slots (either optional) and the activation.
Epilogue epilogue(const RunContext& c, const Conv2DParams& p, const std::optional<Slot>& bias,
                  const std::optional<Slot>& residual, const ActParams& act) {
    Epilogue e;
    e.bias = bias ? c.at(*bias) : nullptr;
    if (residual) {
        e.residual = c.at(*residual);
        e.ldr = p.cout;
    }
    e.act = &act;
    return e;
}

/// Winograd with output tiles of `tile`: U transformed once, scratch from the workspace.
std::unique_ptr<Kernel> make_winograd_kernel(BuildContext& b, const Conv2DParams& p, int tile,
                                             const ConstantVariable& w, Slot x, std::optional<Slot> bias,
                                             std::optional<Slot> residual, Slot y, const ActParams& act) {
    const std::string tag = "winograd " + std::to_string(tile) + " " + std::to_string(p.cin) + "x" + std::to_string(p.cout);
    const float* u = b.keep_shared(w, tag, [&] { return Winograd::transform_weights(w.data().data(), p.cin, p.cout, tile); });
    auto wg = std::make_shared<const Winograd>(p, tile, u, ThreadPool::hardware_threads());
    const Slot ws = b.workspace(wg->workspace_floats());
    return native::make_kernel([=](const RunContext& c) {
        wg->run(c.at(x), c.at(y), epilogue(c, p, bias, residual, act), c.at(ws), c.pool);
    });
}

}  // namespace

std::unique_ptr<Kernel> make_conv2d_kernel(BuildContext& b, const Conv2DParams& p, const ConstantVariable& w,
                                           Slot x, std::optional<Slot> bias, std::optional<Slot> residual, Slot y,
                                           const ActParams& act) {
    // 3x3 stride-1 convolutions large enough to pay (GRAFT_WINOGRAD=0 disables): Winograd.
    if (const int tile = Winograd::choose(p)) return make_winograd_kernel(b, p, tile, w, x, bias, residual, y, act);
    const std::int64_t K = p.kh * p.kw * p.cin, N = p.cout;
    BMatrix wm;
    wm.data = b.keep_shared(w, "pack_b " + std::to_string(N) + "x" + std::to_string(K), [&] { return pack_b(w.data().data(), N, K, N); });
    wm.packed = true;
    return native::make_kernel([=](const RunContext& c) {
        conv2d(p, c.at(x), wm, c.at(y), epilogue(c, p, bias, residual, act), c.pool);
    });
}

}  // namespace graft::cpu::gemm
