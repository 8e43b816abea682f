#include "cpu/gemm/conv_kernel.hpp"

#include <string>

#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/qgemm.hpp"
#include "cpu/gemm/winograd.hpp"
#include "cpu/threadpool.hpp"

namespace graft::cpu::gemm {
namespace {

// Below this many taps per patch (smallcnn's first 3x3 over one channel: 9) copying and
// quantising the patches costs more than the products save: those stay fp32.
constexpr std::int64_t kQConvMinK = 32;

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
    const std::string tag =
        "winograd " + std::to_string(tile) + " " + std::to_string(p.cin) + "x" + std::to_string(p.cout);
    const float* u =
        b.keep_shared(w, tag, [&] { return Winograd::transform_weights(w.data().data(), p.cin, p.cout, tile); });
    auto wg = std::make_shared<const Winograd>(p, tile, u, ThreadPool::hardware_threads());
    const Slot ws = b.workspace(wg->workspace_floats());
    return native::make_kernel(
        [=](const RunContext& c) { wg->run(c.at(x), c.at(y), epilogue(c, p, bias, residual, act), c.at(ws), c.pool); });
}

/// int8 or bf16 (qgemm.hpp's qconv2d): the kernel quantised or rounded once, the patches at every run.
std::unique_ptr<Kernel> make_lowp_kernel(BuildContext& b, const Conv2DParams& p, Precision lowp,
                                         const ConstantVariable& w, Slot x, std::optional<Slot> bias,
                                         std::optional<Slot> residual, Slot y, const ActParams& act) {
    const std::int64_t K = p.kh * p.kw * p.cin, N = p.cout;
    const QMatrix qw = qview(qpack_shared(b, w, K, N, lowp), K, N);
    const int threads = ThreadPool::hardware_threads();
    const Slot ws = b.workspace(qconv2d_work_floats(p, threads));
    return native::make_kernel([=](const RunContext& c) {
        qconv2d(p, c.at(x), qw, c.at(y), epilogue(c, p, bias, residual, act), c.at(ws), c.pool, threads);
    });
}

}  // namespace

Precision conv_precision(Precision requested, const Conv2DParams& p) {
    // Where it pays, measured on ResNet-18, MobileNet v2 and smallcnn (Zen 4). int8 against
    // Winograd's fp32: faster from 128 output channels (ResNet-18's 3x3 stages 2-4: 0.66-0.72
    // against 0.81-0.90 ms), slower at 64, where the patches' copying and quantising weigh more
    // against the products (stage 1: 0.87 against 0.77 ms; smallcnn's 3x3 32 -> 64 at batch 32).
    // bf16's products cost twice int8's: Winograd keeps all of its convolutions.
    const std::int64_t K = p.kh * p.kw * p.cin;
    if (K < kQConvMinK) return Precision::fp32;
    const bool winograd = Winograd::choose(p) != 0;
    if (requested == Precision::int8 && K <= kQMaxK && !(winograd && p.cout <= 64)) return Precision::int8;
    if (requested == Precision::bf16 && !winograd) return Precision::bf16;
    return Precision::fp32;
}

std::unique_ptr<Kernel> make_conv2d_kernel(BuildContext& b, const Conv2DParams& p, const ConstantVariable& w, Slot x,
                                           std::optional<Slot> bias, std::optional<Slot> residual, Slot y,
                                           const ActParams& act) {
    const std::int64_t K = p.kh * p.kw * p.cin, N = p.cout;
    if (const Precision lowp = conv_precision(b.precision(), p); lowp != Precision::fp32)
        return make_lowp_kernel(b, p, lowp, w, x, bias, residual, y, act);
    // 3x3 stride-1 convolutions large enough to pay (GRAFT_WINOGRAD=0 disables): Winograd.
    const int tile = Winograd::choose(p);
    if (tile) return make_winograd_kernel(b, p, tile, w, x, bias, residual, y, act);
    BMatrix wm;
    wm.data = b.keep_shared(w, "pack_b " + std::to_string(N) + "x" + std::to_string(K),
                            [&] { return pack_b(w.data().data(), N, K, N); });
    wm.packed = true;
    return native::make_kernel(
        [=](const RunContext& c) { conv2d(p, c.at(x), wm, c.at(y), epilogue(c, p, bias, residual, act), c.pool); });
}

}  // namespace graft::cpu::gemm
