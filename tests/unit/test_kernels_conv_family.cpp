// Conv3D, Pool3D, depthwise and transposed convolution kernels against direct double loops.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cpu/kernels.hpp"
#include "graft_rt/conv_transpose.hpp"
#include "graft_rt/depthwise.hpp"

using namespace graft::cpu;
using i64 = std::int64_t;
using dvec = std::vector<double>;
using fvec = std::vector<float>;

namespace {

std::mt19937& gen() {
    static std::mt19937 g(4242);
    return g;
}
fvec rnd(i64 n) {
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    fvec v(static_cast<std::size_t>(n));
    for (auto& e : v) e = d(gen());
    return v;
}
int ri(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen()); }

void close(const fvec& got, const dvec& ref, double tol = 1e-5) {
    REQUIRE(got.size() == ref.size());
    double worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double e = std::fabs(got[i] - ref[i]) / std::max(1.0, std::fabs(ref[i]));
        worst = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(worst, e);
    }
    INFO("worst relative error " << worst);
    CHECK(worst <= tol);
}

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
        dvec ref;
        for (i64 n = 0; n < p.n; ++n)
            for (i64 od = 0; od < p.od; ++od)
                for (i64 oh = 0; oh < p.oh; ++oh)
                    for (i64 ow = 0; ow < p.ow; ++ow)
                        for (i64 co = 0; co < p.cout; ++co) {
                            double s = bias ? b[co] : 0.0;
                            for (i64 kd = 0; kd < p.kd; ++kd)
                                for (i64 kh = 0; kh < p.kh; ++kh)
                                    for (i64 kw = 0; kw < p.kw; ++kw) {
                                        const i64 id = od * p.stride_d - p.pad_front + kd * p.dil_d;
                                        const i64 ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                                        const i64 iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
                                        if (id < 0 || id >= p.d || ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
                                        for (i64 ci = 0; ci < p.cin; ++ci)
                                            s += double(x[(((n * p.d + id) * p.h + ih) * p.w + iw) * p.cin + ci]) *
                                                 w[(((kd * p.kh + kh) * p.kw + kw) * p.cin + ci) * p.cout + co];
                                    }
                            ref.push_back(a.kind == Act::relu ? std::max(s, 0.0) : s);
                        }
        close(y, ref);
        close(y_rt, ref);
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
            dvec ref;
            for (i64 n = 0; n < p.n; ++n)
                for (i64 od = 0; od < p.od; ++od)
                    for (i64 oh = 0; oh < p.oh; ++oh)
                        for (i64 ow = 0; ow < p.ow; ++ow)
                            for (i64 c = 0; c < p.c; ++c) {
                                double m = -1e300, s = 0;
                                int cnt = 0;
                                for (i64 a = 0; a < p.kd; ++a)
                                    for (i64 b = 0; b < p.kh; ++b)
                                        for (i64 e = 0; e < p.kw; ++e) {
                                            const i64 id = od * p.stride_d - p.pad_front + a, ih = oh * p.stride_h - p.pad_top + b,
                                                      iw = ow * p.stride_w - p.pad_left + e;
                                            if (id < 0 || id >= p.d || ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
                                            const double v = x[(((n * p.d + id) * p.h + ih) * p.w + iw) * p.c + c];
                                            m = std::max(m, v), s += v, ++cnt;
                                        }
                                ref.push_back(max ? m : s / cnt);
                            }
            close(y, ref);
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
        dvec ref;
        for (i64 n = 0; n < p.n; ++n)
            for (i64 oh = 0; oh < p.oh; ++oh)
                for (i64 ow = 0; ow < p.ow; ++ow)
                    for (i64 c = 0; c < p.cin; ++c)
                        for (i64 m = 0; m < p.mult; ++m) {
                            double s = bias ? b[c * p.mult + m] : 0.0;
                            for (i64 kh = 0; kh < p.kh; ++kh)
                                for (i64 kw = 0; kw < p.kw; ++kw) {
                                    const i64 ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                                    const i64 iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
                                    if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
                                    s += double(x[((n * p.h + ih) * p.w + iw) * p.cin + c]) * w[((kh * p.kw + kw) * p.cin + c) * p.mult + m];
                                }
                            ref.push_back(a.kind == Act::tanh ? std::tanh(s) : s);
                        }
        close(y, ref);
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
        dvec ref(y.size(), 0.0);
        for (i64 n = 0; n < p.n; ++n)
            for (i64 i = 0; i < p.od * p.oh * p.ow; ++i)
                for (i64 co = 0; co < p.cout; ++co) ref[static_cast<std::size_t>((n * p.od * p.oh * p.ow + i) * p.cout + co)] = bias ? b[co] : 0.0;
        for (i64 n = 0; n < p.n; ++n)
            for (i64 id = 0; id < p.d; ++id)
                for (i64 ih = 0; ih < p.h; ++ih)
                    for (i64 iw = 0; iw < p.w; ++iw)
                        for (i64 kd = 0; kd < p.kd; ++kd)
                            for (i64 kh = 0; kh < p.kh; ++kh)
                                for (i64 kw = 0; kw < p.kw; ++kw) {
                                    const i64 od = id * p.stride_d - p.pad_front + kd * p.dil_d;
                                    const i64 oh = ih * p.stride_h - p.pad_top + kh * p.dil_h;
                                    const i64 ow = iw * p.stride_w - p.pad_left + kw * p.dil_w;
                                    if (od < 0 || od >= p.od || oh < 0 || oh >= p.oh || ow < 0 || ow >= p.ow) continue;
                                    for (i64 co = 0; co < p.cout; ++co) {
                                        double s = 0;
                                        for (i64 ci = 0; ci < p.cin; ++ci)
                                            s += double(w[(((kd * p.kh + kh) * p.kw + kw) * p.cout + co) * p.cin + ci]) *
                                                 x[(((n * p.d + id) * p.h + ih) * p.w + iw) * p.cin + ci];
                                        ref[static_cast<std::size_t>((((n * p.od + od) * p.oh + oh) * p.ow + ow) * p.cout + co)] += s;
                                    }
                                }
        close(y, ref);
    }
}
