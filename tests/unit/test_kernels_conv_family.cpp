// Conv3D, Pool3D, depthwise and transposed convolution kernels against direct double loops.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cpu/kernels.hpp"
#include "cpu/threadpool.hpp"
#include "graft_rt/conv_transpose.hpp"
#include "graft_rt/depthwise.hpp"
#include "isa_support.hpp"
#include "kernel_ref.hpp"

namespace graft_test_kernels_conv_family {

using namespace kernel_ref;

namespace {

std::mt19937& gen() {
    static std::mt19937 g(4242);
    return g;
}
fvec rnd(i64 n) { return rand_vec(gen(), n); }
int ri(int lo, int hi) { return rand_int(gen(), lo, hi); }

/// TF 'same' or 'valid' output size and leading pad along one axis.
void span(i64 in, i64 k, i64 s, i64 d, bool same, i64& out, i64& pad) {
    const i64 ke = (k - 1) * d + 1;
    if (same) {
        out = (in + s - 1) / s;
        pad = std::max<i64>((out - 1) * s + ke - in, 0) / 2;
    } else {
        out = (in - ke) / s + 1;
        pad = 0;
    }
}

}  // namespace

TEST_CASE("kernels: conv3d_ndhwc_unpacked and graft_rt::conv3d_ndhwc match a direct loop", "[kernels][conv3d]") {
    for (int trial = 0; trial < 24; ++trial) {
        Conv3DParams p{};
        p.n = ri(1, 2), p.d = ri(2, 6), p.h = ri(2, 6), p.w = ri(2, 7), p.cin = ri(1, 4);
        p.kd = ri(1, 2), p.kh = ri(1, 3), p.kw = ri(1, 3), p.cout = ri(1, 5);
        const bool dilated = trial % 3 == 0, same = trial % 2 == 0;
        p.stride_d = dilated ? 1 : ri(1, 2), p.stride_h = dilated ? 1 : ri(1, 2), p.stride_w = dilated ? 1 : ri(1, 3);
        p.dil_d = dilated ? 2 : 1, p.dil_h = dilated ? ri(1, 2) : 1, p.dil_w = dilated ? 2 : 1;
        if ((p.kd - 1) * p.dil_d + 1 > p.d || (p.kh - 1) * p.dil_h + 1 > p.h || (p.kw - 1) * p.dil_w + 1 > p.w) continue;
        span(p.d, p.kd, p.stride_d, p.dil_d, same, p.od, p.pad_front);
        span(p.h, p.kh, p.stride_h, p.dil_h, same, p.oh, p.pad_top);
        span(p.w, p.kw, p.stride_w, p.dil_w, same, p.ow, p.pad_left);
        auto x = rnd(p.n * p.d * p.h * p.w * p.cin), w = rnd(p.kd * p.kh * p.kw * p.cin * p.cout), b = rnd(p.cout);
        const bool bias = trial % 4 != 1;
        ActParams a{trial % 5 == 0 ? Act::relu : Act::linear};
        fvec y(static_cast<std::size_t>(p.n * p.od * p.oh * p.ow * p.cout));
        conv3d_ndhwc_unpacked(x.data(), w.data(), bias ? b.data() : nullptr, y.data(), p, a);
        // graft_rt's (the generated code's) on the weights packed
        const i64 K = p.kd * p.kh * p.kw * p.cin;
        fvec packed(static_cast<std::size_t>(graft_rt::packed_floats(K, p.cout))), y_rt(y.size());
        graft_rt::pack_panels(w.data(), p.cout, K, p.cout, packed.data());
        graft_rt::conv3d_ndhwc(x.data(), packed.data(), bias ? b.data() : nullptr, y_rt.data(), p, a);
        const Axes axes{{p.d, p.kd, p.stride_d, p.dil_d, p.pad_front, p.od},
                        {p.h, p.kh, p.stride_h, p.dil_h, p.pad_top, p.oh},
                        {p.w, p.kw, p.stride_w, p.dil_w, p.pad_left, p.ow}};
        dvec ref = conv_nd_ref(x, w, bias ? b.data() : nullptr, p.n, p.cin, p.cout, axes);
        for (double& v : ref) v = act_ref(v, a);
        check_close(y, ref);
        check_close(y_rt, ref);
    }
}

TEST_CASE("kernels: graft_rt::pool_ndhwc (3-D) max and average (padding excluded) match a direct loop", "[kernels][pool3d]") {
    for (int trial = 0; trial < 16; ++trial) {
        graft_rt::PoolParams p{};
        p.n = ri(1, 2), p.d = ri(2, 5), p.h = ri(2, 5), p.w = ri(2, 6), p.c = ri(1, 3);
        p.kd = ri(1, 2), p.kh = ri(1, 3), p.kw = ri(1, 3);
        p.stride_d = ri(1, 2), p.stride_h = ri(1, 2), p.stride_w = ri(1, 3);
        const bool same = trial % 2 == 0;
        if (p.kd > p.d || p.kh > p.h || p.kw > p.w) continue;
        span(p.d, p.kd, p.stride_d, 1, same, p.od, p.pad_front);
        span(p.h, p.kh, p.stride_h, 1, same, p.oh, p.pad_top);
        span(p.w, p.kw, p.stride_w, 1, same, p.ow, p.pad_left);
        auto x = rnd(p.n * p.d * p.h * p.w * p.c);
        for (bool max : {true, false}) {
            fvec y(static_cast<std::size_t>(p.n * p.od * p.oh * p.ow * p.c));
            graft_rt::pool_ndhwc(x.data(), y.data(), p, max);
            const Axes axes{{p.d, p.kd, p.stride_d, 1, p.pad_front, p.od},
                            {p.h, p.kh, p.stride_h, 1, p.pad_top, p.oh},
                            {p.w, p.kw, p.stride_w, 1, p.pad_left, p.ow}};
            check_close(y, pool_nd_ref(x, p.n, p.c, axes, max));
        }
    }
}

TEST_CASE("kernels: graft_rt::depthwise2d_nhwc matches a direct loop (multiplier, strides, dilation)",
          "[kernels][depthwise]") {
    for (int trial = 0; trial < 24; ++trial) {
        graft_rt::DepthwiseParams p{};
        p.n = ri(1, 2), p.h = ri(1, 7), p.w = ri(2, 8), p.cin = ri(1, 5), p.mult = ri(1, 3);
        p.kh = ri(1, 3), p.kw = ri(1, 3);
        const bool dilated = trial % 3 == 0, same = trial % 2 == 1;
        p.stride_h = dilated ? 1 : ri(1, 2), p.stride_w = dilated ? 1 : ri(1, 3);
        p.dil_h = dilated ? ri(1, 2) : 1, p.dil_w = dilated ? 2 : 1;
        if ((p.kh - 1) * p.dil_h + 1 > p.h || (p.kw - 1) * p.dil_w + 1 > p.w) continue;
        span(p.h, p.kh, p.stride_h, p.dil_h, same, p.oh, p.pad_top);
        span(p.w, p.kw, p.stride_w, p.dil_w, same, p.ow, p.pad_left);
        const i64 cout = p.cin * p.mult;
        auto x = rnd(p.n * p.h * p.w * p.cin), w = rnd(p.kh * p.kw * cout), b = rnd(cout);
        const bool bias = trial % 4 != 2;
        ActParams a{trial % 5 == 0 ? Act::tanh : Act::linear};
        fvec y(static_cast<std::size_t>(p.n * p.oh * p.ow * cout));
        graft_rt::depthwise2d_nhwc(x.data(), w.data(), bias ? b.data() : nullptr, y.data(), p, a);
        const Axes axes{{p.h, p.kh, p.stride_h, p.dil_h, p.pad_top, p.oh}, {p.w, p.kw, p.stride_w, p.dil_w, p.pad_left, p.ow}};
        dvec ref = conv_nd_ref(x, w, bias ? b.data() : nullptr, p.n, p.cin, cout, axes, p.cin);
        for (double& v : ref) v = act_ref(v, a);
        check_close(y, ref);
    }
}

TEST_CASE("kernels: the native depthwise kernel matches a direct loop on every ISA (3x3 interiors, pads, channel tails)",
          "[kernels][depthwise]") {
    graft_test::IsaGuard guard;
    graft::cpu::ThreadPool pool(2);
    const ActParams acts[] = {ActParams{Act::linear}, ActParams{Act::relu},
                              ActParams{Act::relu_general, 0.f, 6.f, 0.f},  // ReLU6
                              ActParams{Act::clip, -0.5f, 0.75f, 0.f}, ActParams{Act::tanh}};
    for (auto isa : graft_test::isas()) {
        graft::cpu::gemm::set_isa(isa);
        for (int trial = 0; trial < 48; ++trial) {
            graft_rt::DepthwiseParams p{};
            // Mostly the 3x3 fast path; also 1x3, 5x5, dilated. The last trials: images large
            // enough for several bands of rows (a quarter of the L2 each), one or two per thread.
            const bool k3 = trial % 4 != 3 || trial >= 40, large = trial >= 40;
            p.n = ri(1, 2), p.h = large ? ri(40, 72) : ri(1, 9), p.w = large ? ri(40, 72) : ri(1, 30), p.mult = 1;
            p.cin = large ? 16 * ri(3, 5) + ri(0, 3) : trial % 3 == 0 ? 8 * ri(1, 5) : ri(1, 40);
            p.kh = k3 ? 3 : ri(1, 5), p.kw = k3 ? 3 : ri(1, 5);
            p.stride_h = ri(1, 2), p.stride_w = ri(1, 3);
            p.dil_h = k3 ? 1 : ri(1, 2), p.dil_w = k3 ? 1 : ri(1, 2);
            // Explicit pads, any from 0 to 2 on each side (ONNX's pads; fold_pad's sums).
            const i64 pt = ri(0, 2), pb = ri(0, 2), pl = ri(0, 2), pr = ri(0, 2);
            const i64 rh = (p.kh - 1) * p.dil_h + 1, rw = (p.kw - 1) * p.dil_w + 1;
            if (p.h + pt + pb < rh || p.w + pl + pr < rw) continue;
            p.pad_top = pt, p.pad_left = pl;
            p.oh = (p.h + pt + pb - rh) / p.stride_h + 1, p.ow = (p.w + pl + pr - rw) / p.stride_w + 1;
            auto x = rnd(p.n * p.h * p.w * p.cin), w = rnd(p.kh * p.kw * p.cin), b = rnd(p.cin);
            for (auto& v : x) v *= 8.f;  // past ReLU6's and the clip's bounds
            const bool bias = trial % 5 != 2;
            const ActParams& a = acts[trial % 5];
            fvec y(static_cast<std::size_t>(p.n * p.oh * p.ow * p.cin), -99.f);
            graft::cpu::depthwise2d_nhwc(x.data(), w.data(), bias ? b.data() : nullptr, y.data(), p, a,
                                         trial % 2 ? &pool : nullptr);
            const Axes axes{{p.h, p.kh, p.stride_h, p.dil_h, p.pad_top, p.oh}, {p.w, p.kw, p.stride_w, p.dil_w, p.pad_left, p.ow}};
            dvec ref = conv_nd_ref(x, w, bias ? b.data() : nullptr, p.n, p.cin, p.cin, axes, p.cin);
            for (double& v : ref) v = act_ref(v, a);
            INFO("isa " << graft::cpu::gemm::isa_name(isa) << " trial " << trial << ": h " << p.h << " w " << p.w << " c "
                        << p.cin << " k " << p.kh << "x" << p.kw << " s " << p.stride_h << "," << p.stride_w << " pads "
                        << pt << "," << pl << "," << pb << "," << pr);
            check_close(y, ref, 1e-4);
        }
    }
}

TEST_CASE("kernels: the native depthwise kernel's relu turns NaN into 0, its clamp keeps NaN", "[kernels][depthwise]") {
    graft_test::IsaGuard guard;
    for (auto isa : graft_test::isas()) {
        graft::cpu::gemm::set_isa(isa);
        graft_rt::DepthwiseParams p{};
        p.n = 1, p.h = 3, p.w = 12, p.cin = 20, p.mult = 1, p.kh = 3, p.kw = 3, p.stride_h = 1, p.stride_w = 1;
        p.dil_h = 1, p.dil_w = 1, p.pad_top = 1, p.pad_left = 1, p.oh = 3, p.ow = 12;
        fvec x(static_cast<std::size_t>(3 * 12 * 20), 1.f), w(9 * 20, 1.f);
        x[static_cast<std::size_t>((1 * 12 + 5) * 20 + 3)] = std::nanf("");  // row 1, column 5, channel 3
        for (const ActParams& a : {ActParams{Act::relu}, ActParams{Act::clip, 0.f, 6.f, 0.f}}) {
            fvec y(static_cast<std::size_t>(3 * 12 * 20));
            graft::cpu::depthwise2d_nhwc(x.data(), w.data(), nullptr, y.data(), p, a, nullptr);
            const float v = y[static_cast<std::size_t>((1 * 12 + 5) * 20 + 3)];
            INFO(graft::cpu::gemm::isa_name(isa));
            if (a.kind == Act::relu)
                CHECK(v == 0.f);
            else
                CHECK(std::isnan(v));
            CHECK(y[static_cast<std::size_t>((1 * 12 + 5) * 20 + 4)] == (a.kind == Act::relu ? 9.f : 6.f));  // nine ones
        }
    }
}

TEST_CASE("kernels: graft_rt::conv_transpose_ndhwc matches a scatter loop", "[kernels][conv_transpose]") {
    for (int trial = 0; trial < 30; ++trial) {
        graft_rt::ConvTransposeParams p{};
        const bool three = trial % 3 == 0, long_kernel = trial == 7;
        p.n = ri(1, 2), p.d = three ? ri(1, 3) : 1, p.h = ri(1, 4), p.w = ri(1, 5), p.cin = ri(1, 4);
        p.kd = three ? ri(1, 3) : 1, p.kh = ri(1, 3), p.kw = long_kernel ? 67 : ri(1, 4), p.cout = ri(1, 4);
        p.stride_d = ri(1, 2), p.stride_h = ri(1, 3), p.stride_w = ri(1, 3);
        p.dil_d = 1, p.dil_h = trial % 4 == 0 ? 2 : 1, p.dil_w = trial % 5 == 0 ? 2 : 1;
        // Full output (pad 0, size (in-1)*s + k_eff), then trimmed by a pad and an extra tail.
        auto full = [](i64 in, i64 k, i64 s, i64 d) { return (in - 1) * s + (k - 1) * d + 1; };
        p.pad_front = ri(0, 1), p.pad_top = ri(0, 1), p.pad_left = ri(0, 2);
        p.od = std::max<i64>(1, full(p.d, p.kd, p.stride_d, p.dil_d) - 2 * p.pad_front + ri(0, 1));
        p.oh = std::max<i64>(1, full(p.h, p.kh, p.stride_h, p.dil_h) - 2 * p.pad_top + ri(0, 1));
        p.ow = std::max<i64>(1, full(p.w, p.kw, p.stride_w, p.dil_w) - 2 * p.pad_left + ri(0, 2));
        auto x = rnd(p.n * p.d * p.h * p.w * p.cin), w = rnd(p.kd * p.kh * p.kw * p.cout * p.cin), b = rnd(p.cout);
        const bool bias = trial % 2 == 0;
        fvec y(static_cast<std::size_t>(p.n * p.od * p.oh * p.ow * p.cout));
        graft_rt::conv_transpose_ndhwc(x.data(), w.data(), bias ? b.data() : nullptr, y.data(), p, ActParams{});
        // Scatter: input position i feeds output position o = i * stride - pad + t * dil, the window
        // of a convolution with inputs and outputs swapped.
        const Axes scatter{{p.od, p.kd, p.stride_d, p.dil_d, p.pad_front, p.d},
                           {p.oh, p.kh, p.stride_h, p.dil_h, p.pad_top, p.h},
                           {p.ow, p.kw, p.stride_w, p.dil_w, p.pad_left, p.w}};
        const i64 I = p.d * p.h * p.w, O = p.od * p.oh * p.ow;
        dvec ref(y.size());
        for (i64 n = 0; n < p.n; ++n) {
            for (i64 o = 0; o < O; ++o)
                for (i64 co = 0; co < p.cout; ++co) ref[static_cast<std::size_t>((n * O + o) * p.cout + co)] = bias ? b[co] : 0.0;
            for_each_tap(scatter, [&](i64 in, i64 out, i64 t) {
                for (i64 co = 0; co < p.cout; ++co) {
                    double s = 0;
                    for (i64 ci = 0; ci < p.cin; ++ci)
                        s += double(w[(t * p.cout + co) * p.cin + ci]) * x[(n * I + in) * p.cin + ci];
                    ref[static_cast<std::size_t>((n * O + out) * p.cout + co)] += s;
                }
            });
        }
        check_close(y, ref);
    }
}

}  // namespace graft_test_kernels_conv_family
