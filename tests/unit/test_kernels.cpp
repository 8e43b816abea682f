// Native CPU kernels checked against direct double-precision reference loops.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cpu/kernels.hpp"
#include "graft_rt/shape.hpp"
#include "graft_rt/elementwise.hpp"
#include "graft_rt/softmax.hpp"
#include "kernel_ref.hpp"

namespace graft_test_kernels {

using namespace kernel_ref;

namespace {

// ---------------------------------------------------------------- reference layers

dvec dense_ref(const fvec& x, const fvec& w, const float* b, i64 M, i64 K, i64 N, const ActParams& a) {
    dvec y(static_cast<std::size_t>(M * N));
    for (i64 m = 0; m < M; ++m)
        for (i64 n = 0; n < N; ++n) {
            double s = b ? b[n] : 0.0;
            for (i64 k = 0; k < K; ++k) s += static_cast<double>(x[m * K + k]) * w[k * N + n];
            y[m * N + n] = act_ref(s, a);
        }
    return y;
}

i64 out_size(i64 in, i64 k, i64 stride, i64 dil, i64 pad_lo, i64 pad_hi) {
    const i64 eff = dil * (k - 1) + 1;
    return (in + pad_lo + pad_hi - eff) / stride + 1;
}

dvec conv_ref(const fvec& x, const fvec& w, const float* b, const Conv2DParams& p, const ActParams& a) {
    const Axes axes{{p.h, p.kh, p.stride_h, p.dil_h, p.pad_top, p.oh}, {p.w, p.kw, p.stride_w, p.dil_w, p.pad_left, p.ow}};
    dvec y = conv_nd_ref(x, w, b, p.n, p.cin, p.cout, axes);
    for (double& v : y) v = act_ref(v, a);
    return y;
}

dvec pool_ref(const fvec& x, const PoolParams& p, bool max) {
    return pool_nd_ref(x, p.n, p.c, {{p.h, p.kh, p.stride_h, 1, p.pad_top, p.oh}, {p.w, p.kw, p.stride_w, 1, p.pad_left, p.ow}},
                       max);
}

}  // namespace

// ================================================================ activations

TEST_CASE("activation: every kind matches the double reference", "[kernels][activation]") {
    fvec xs;
    for (float v = -12.f; v <= 12.f; v += 0.37f) xs.push_back(v);
    for (float v : {-100.f, -50.f, -30.f, -20.f, -1e-3f, 0.f, 1e-3f, 0.5f, 1.f, 6.f, 20.f, 30.f, 50.f})
        xs.push_back(v);
    for (const ActParams& a : all_acts()) {
        fvec in = xs;
        if (a.kind == Act::exponential)  // keep e^x finite in float
            for (auto& v : in) v = std::min(v, 20.f);
        fvec y(in.size());
        activate(in.data(), y.data(), static_cast<i64>(in.size()), a);
        dvec ref(in.size());
        for (std::size_t i = 0; i < in.size(); ++i) ref[i] = act_ref(in[i], a);
        check_close(y, ref, 2e-6, "act " + std::to_string(static_cast<int>(a.kind)));
        // In place gives the same result.
        fvec z = in;
        activate(z.data(), z.data(), static_cast<i64>(z.size()), a);
        CHECK(z == y);
    }
}

TEST_CASE("activation: hand-computed values", "[kernels][activation]") {
    const ActParams rg = act_of(Act::relu_general, 0.1f, 6.f, 0.5f);
    CHECK(act1(rg, -1.f) == Approx(-0.15f).margin(1e-7));   // 0.1 * (-1 - 0.5)
    CHECK(act1(rg, 0.f) == Approx(-0.05f).margin(1e-7));    // 0.1 * (0 - 0.5)
    CHECK(act1(rg, 0.5f) == 0.f);                           // x > threshold is strict in Keras
    CHECK(act1(rg, 0.7f) == Approx(0.7f).margin(1e-7));
    CHECK(act1(rg, 6.f) == 6.f);
    CHECK(act1(rg, 10.f) == 6.f);
    const ActParams relu6 = act_of(Act::relu_general, 0.f, 6.f, 0.f);
    CHECK(act1(relu6, -3.f) == 0.f);
    CHECK(act1(relu6, 3.f) == 3.f);
    CHECK(act1(relu6, 7.f) == 6.f);
    const ActParams leaky = act_of(Act::relu_general, 0.2f, -1.f, 0.f);
    CHECK(act1(leaky, -2.f) == Approx(-0.4f).margin(1e-7));
    CHECK(act1(leaky, 2.f) == 2.f);

    CHECK(act1(act_of(Act::selu), -1.f) == Approx(-1.1113307378125628).epsilon(1e-6));
    CHECK(act1(act_of(Act::selu), 2.f) == Approx(2.101401974710961).epsilon(1e-6));
    CHECK(act1(act_of(Act::elu, 1.f), -1.f) == Approx(-0.6321205588285577).epsilon(1e-6));
    CHECK(act1(act_of(Act::hard_sigmoid), 3.f) == 1.f);
    CHECK(act1(act_of(Act::hard_sigmoid), -3.f) == 0.f);
    CHECK(act1(act_of(Act::hard_sigmoid), 0.f) == 0.5f);
    CHECK(act1(act_of(Act::hard_sigmoid), 1.f) == Approx(0.7f).epsilon(1e-6));
    CHECK(act1(act_of(Act::hard_sigmoid_keras3), 3.f) == 1.f);
    CHECK(act1(act_of(Act::hard_sigmoid_keras3), -3.f) == 0.f);
    CHECK(act1(act_of(Act::hard_sigmoid_keras3), 0.f) == 0.5f);
    CHECK(act1(act_of(Act::hard_sigmoid_keras3), 1.5f) == 0.75f);
    CHECK(act1(act_of(Act::softplus), 0.f) == Approx(0.6931471805599453).epsilon(1e-6));
    CHECK(act1(act_of(Act::softplus), 100.f) == 100.f);
    CHECK(act1(act_of(Act::softplus), -100.f) >= 0.f);
    CHECK(act1(act_of(Act::sigmoid), 100.f) == 1.f);
    CHECK(act1(act_of(Act::sigmoid), -100.f) >= 0.f);
    CHECK(act1(act_of(Act::sigmoid), -100.f) < 1e-40f);
    CHECK(act1(act_of(Act::sigmoid), 0.f) == 0.5f);
    CHECK(act1(act_of(Act::gelu), 1.f) == Approx(0.8413447460685429).epsilon(1e-6));
    CHECK(act1(act_of(Act::gelu_tanh), 1.f) == Approx(0.8411919906082768).epsilon(1e-6));
    CHECK(act1(act_of(Act::swish), 1.f) == Approx(0.7310585786300049).epsilon(1e-6));
    CHECK(act1(act_of(Act::softsign), -3.f) == Approx(-0.75f).epsilon(1e-7));
    CHECK(act1(act_of(Act::leaky_relu, 0.3f), -2.f) == Approx(-0.6f).epsilon(1e-6));
    CHECK(act1(act_of(Act::thresholded_relu, 1.f), 1.f) == 0.f);
    CHECK(act1(act_of(Act::thresholded_relu, 1.f), 1.5f) == 1.5f);
    for (const ActParams& a : all_acts())
        for (float v : {-1e30f, -88.f, 88.f}) {
            if (a.kind == Act::exponential && v > 0) continue;
            INFO("kind " << static_cast<int>(a.kind) << " x " << v);
            CHECK(!std::isnan(act1(a, v)));
        }
}

TEST_CASE("activation: ONNX's unary math on its domains", "[kernels][activation]") {
    struct Case {
        ActParams a;
        float lo, hi;
    };
    const Case cases[] = {
        {act_of(Act::abs), -10.f, 10.f},          {act_of(Act::neg), -10.f, 10.f},
        {act_of(Act::log), 1e-3f, 100.f},         {act_of(Act::sqrt), 0.f, 100.f},
        {act_of(Act::reciprocal), 0.01f, 50.f},   {act_of(Act::floor), -10.f, 10.f},
        {act_of(Act::ceil), -10.f, 10.f},         {act_of(Act::round), -10.f, 10.f},
        {act_of(Act::sign), -10.f, 10.f},         {act_of(Act::sin), -10.f, 10.f},
        {act_of(Act::cos), -10.f, 10.f},          {act_of(Act::tan), -1.4f, 1.4f},
        {act_of(Act::asin), -1.f, 1.f},           {act_of(Act::acos), -1.f, 1.f},
        {act_of(Act::atan), -50.f, 50.f},         {act_of(Act::sinh), -10.f, 10.f},
        {act_of(Act::cosh), -10.f, 10.f},         {act_of(Act::asinh), -50.f, 50.f},
        {act_of(Act::acosh), 1.f, 50.f},          {act_of(Act::atanh), -0.99f, 0.99f},
        {act_of(Act::celu, 1.f), -10.f, 10.f},    {act_of(Act::celu, 0.5f), -10.f, 10.f},
        {act_of(Act::hard_swish), -10.f, 10.f},   {act_of(Act::hard_sigmoid_general, 0.2f, -1.f, 0.5f), -10.f, 10.f},
        {act_of(Act::shrink, 0.5f, -1.f, 0.f), -3.f, 3.f}, {act_of(Act::shrink, 1.f, -1.f, 0.25f), -3.f, 3.f},
        {act_of(Act::clip, -1.f, 2.f), -5.f, 5.f},
    };
    for (const Case& c : cases) {
        fvec in;
        for (int i = 0; i <= 200; ++i) in.push_back(c.lo + (c.hi - c.lo) * static_cast<float>(i) / 200.f);
        fvec y(in.size());
        activate(in.data(), y.data(), static_cast<i64>(in.size()), c.a);
        dvec ref(in.size());
        for (std::size_t i = 0; i < in.size(); ++i) ref[i] = act_ref(in[i], c.a);
        check_close(y, ref, 2e-6, std::string("act ") + graft_rt::act_name(c.a.kind));
    }
    // round is half to even; sign of 0 is 0; clip's bounds are inclusive
    const ActParams round = act_of(Act::round);
    CHECK(act1(round, 0.5f) == 0.f);
    CHECK(act1(round, 1.5f) == 2.f);
    CHECK(act1(round, 2.5f) == 2.f);
    CHECK(act1(round, -2.5f) == -2.f);
    CHECK(act1(round, -0.7f) == -1.f);
    CHECK(act1(act_of(Act::sign), 0.f) == 0.f);
    CHECK(act1(act_of(Act::sign), -3.f) == -1.f);
    CHECK(act1(act_of(Act::clip, -1.f, 2.f), 2.f) == 2.f);
    CHECK(act1(act_of(Act::clip, -1.f, 2.f), -7.f) == -1.f);
    CHECK(act1(act_of(Act::shrink, 0.5f, -1.f, 0.1f), 0.5f) == 0.f);
    CHECK(act1(act_of(Act::shrink, 0.5f, -1.f, 0.1f), 1.f) == Approx(0.9f).epsilon(1e-6));
    CHECK(act1(act_of(Act::hard_swish), 1.f) == Approx(1.f * (1.f / 6 + 0.5f)).epsilon(1e-6));
}

// ================================================================ dense

TEST_CASE("dense: small and odd shapes, bias and epilogues", "[kernels][dense]") {
    const i64 Ms[] = {1, 2, 3, 4, 5, 7, 9};
    const i64 Ks[] = {1, 2, 5, 17, 64};
    const i64 Ns[] = {1, 3, 4, 5, 8, 15, 16, 17, 31, 33, 64, 70};
    const ActParams acts[] = {act_of(Act::linear), act_of(Act::relu), act_of(Act::sigmoid),
                              act_of(Act::relu_general, 0.1f, 0.5f, 0.2f)};
    int c = 0;
    for (i64 M : Ms)
        for (i64 K : Ks)
            for (i64 N : Ns) {
                const ActParams& a = acts[c++ % 4];
                fvec x = rand_vec(M * K), w = rand_vec(K * N), b = rand_vec(N);
                const bool with_bias = (c % 3) != 0;
                fvec y(static_cast<std::size_t>(M * N), 123.f);
                dense(x.data(), w.data(), with_bias ? b.data() : nullptr, y.data(), M, K, N, a);
                std::ostringstream s;
                s << "M=" << M << " K=" << K << " N=" << N;
                check_close(y, dense_ref(x, w, with_bias ? b.data() : nullptr, M, K, N, a), 1e-5, s.str());
            }
}

TEST_CASE("dense: K blocking (K > 256) and larger shapes", "[kernels][dense]") {
    struct S { i64 M, K, N; };
    for (S s : {S{1, 784, 512}, S{6, 300, 37}, S{13, 513, 40}, S{32, 257, 10}, S{4, 1000, 1}}) {
        fvec x = rand_vec(s.M * s.K), w = rand_vec(s.K * s.N, -0.1f, 0.1f), b = rand_vec(s.N);
        fvec y(static_cast<std::size_t>(s.M * s.N));
        const ActParams a = act_of(Act::tanh);
        dense(x.data(), w.data(), b.data(), y.data(), s.M, s.K, s.N, a);
        check_close(y, dense_ref(x, w, b.data(), s.M, s.K, s.N, a), 1e-5,
                    "K=" + std::to_string(s.K) + " N=" + std::to_string(s.N));
    }
}

// ================================================================ conv2d

namespace {

Conv2DParams conv_params(i64 n, i64 h, i64 w, i64 cin, i64 kh, i64 kw, i64 cout, i64 sh, i64 sw, i64 dh, i64 dw,
                         i64 pt, i64 pb, i64 pl, i64 pr) {
    Conv2DParams p{};
    p.n = n; p.h = h; p.w = w; p.cin = cin;
    p.kh = kh; p.kw = kw; p.cout = cout;
    p.stride_h = sh; p.stride_w = sw; p.dil_h = dh; p.dil_w = dw;
    p.pad_top = pt; p.pad_left = pl;
    p.oh = out_size(h, kh, sh, dh, pt, pb);
    p.ow = out_size(w, kw, sw, dw, pl, pr);
    return p;
}

void run_conv(const Conv2DParams& p, const ActParams& a, bool with_bias) {
    REQUIRE(p.oh >= 1);
    REQUIRE(p.ow >= 1);
    fvec x = rand_vec(p.n * p.h * p.w * p.cin), w = rand_vec(p.kh * p.kw * p.cin * p.cout), b = rand_vec(p.cout);
    fvec y(static_cast<std::size_t>(p.n * p.oh * p.ow * p.cout), 77.f);
    const dvec ref = conv_ref(x, w, with_bias ? b.data() : nullptr, p, a);
    std::ostringstream s;
    s << "conv h=" << p.h << " w=" << p.w << " cin=" << p.cin << " k=" << p.kh << "x" << p.kw << " cout=" << p.cout
      << " s=" << p.stride_h << "," << p.stride_w << " d=" << p.dil_h << "," << p.dil_w << " pad=" << p.pad_top
      << "," << p.pad_left << " out=" << p.oh << "x" << p.ow;
    // The native kernel for computed weights: the GEMM tap by tap, as a 3-D convolution.
    conv3d_ndhwc_unpacked(x.data(), w.data(), with_bias ? b.data() : nullptr, y.data(), graft_rt::as_3d(p), a);
    check_close(y, ref, 1e-5, s.str());
    // graft_rt's (the generated code's) on packed weights, tap by tap and by im2col blocks of rows.
    const i64 K = p.kh * p.kw * p.cin;
    fvec packed(static_cast<std::size_t>(graft_rt::packed_floats(K, p.cout)));
    graft_rt::pack_panels(w.data(), p.cout, K, p.cout, packed.data());
    for (i64 block_rows : {i64{0}, i64{2}}) {
        fvec work(static_cast<std::size_t>(block_rows * p.ow * K)), y2(y.size(), 77.f);
        graft_rt::conv2d_nhwc(x.data(), packed.data(), with_bias ? b.data() : nullptr, y2.data(), p, a, block_rows,
                              work.data());
        check_close(y2, ref, 1e-5, s.str() + " graft_rt block_rows=" + std::to_string(block_rows));
    }
}

}  // namespace

TEST_CASE("conv2d: edge cases", "[kernels][conv]") {
    const ActParams lin = act_of(Act::linear), relu = act_of(Act::relu);
    // 1x1 convolution
    run_conv(conv_params(2, 5, 4, 3, 1, 1, 7, 1, 1, 1, 1, 0, 0, 0, 0), lin, true);
    // 'same' 3x3, channels 1 in and out
    run_conv(conv_params(1, 6, 6, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1), relu, true);
    // padding larger than the kernel (whole output rows/cols see only zeros)
    run_conv(conv_params(1, 4, 5, 2, 2, 2, 3, 1, 1, 1, 1, 3, 3, 4, 2), relu, true);
    run_conv(conv_params(1, 3, 3, 2, 2, 3, 5, 2, 1, 1, 1, 4, 4, 5, 5), lin, false);
    // stride greater than the kernel
    run_conv(conv_params(2, 9, 11, 3, 2, 1, 4, 3, 4, 1, 1, 0, 0, 0, 0), lin, true);
    // dilation, non-square kernel, non-square input
    run_conv(conv_params(1, 10, 7, 4, 3, 2, 6, 1, 1, 2, 3, 2, 2, 3, 3), relu, true);
    run_conv(conv_params(1, 12, 12, 2, 3, 3, 5, 2, 2, 2, 2, 1, 1, 1, 1), lin, true);
    // kernel covering the whole input (valid -> 1x1 output)
    run_conv(conv_params(3, 4, 3, 5, 4, 3, 2, 1, 1, 1, 1, 0, 0, 0, 0), lin, true);
    // wide enough to exercise the 4-row micro-kernel and vector column tiles
    run_conv(conv_params(1, 8, 21, 19, 3, 3, 40, 1, 1, 1, 1, 1, 1, 1, 1), act_of(Act::sigmoid), true);
    run_conv(conv_params(2, 7, 16, 33, 3, 3, 17, 1, 2, 1, 1, 1, 1, 0, 1), relu, true);
}

TEST_CASE("conv2d: random configurations", "[kernels][conv]") {
    for (int it = 0; it < 300; ++it) {
        const i64 kh = rand_int(1, 4), kw = rand_int(1, 4), dh = rand_int(1, 3), dw = rand_int(1, 3);
        const i64 pt = rand_int(0, 4), pb = rand_int(0, 4), pl = rand_int(0, 4), pr = rand_int(0, 4);
        const i64 h = std::max<i64>(rand_int(1, 9), dh * (kh - 1) + 1 - pt - pb);
        const i64 w = std::max<i64>(rand_int(1, 9), dw * (kw - 1) + 1 - pl - pr);
        const Conv2DParams p = conv_params(rand_int(1, 2), h, w, rand_int(1, 6), kh, kw, rand_int(1, 20),
                                           rand_int(1, 3), rand_int(1, 3), dh, dw, pt, pb, pl, pr);
        run_conv(p, it % 2 ? act_of(Act::relu) : act_of(Act::linear), it % 3 != 0);
    }
}

// ================================================================ pooling and reductions

TEST_CASE("pool2d: max and average with padding, strides, edge windows", "[kernels][pool]") {
    struct C { i64 n, h, w, c, kh, kw, sh, sw, pt, pb, pl, pr; };
    std::vector<C> cases = {
        {1, 4, 4, 1, 2, 2, 2, 2, 0, 0, 0, 0},   // classic 2x2/2
        {2, 5, 5, 3, 3, 3, 2, 2, 1, 1, 1, 1},   // 'same'-style padding
        {1, 5, 7, 2, 3, 2, 1, 1, 1, 1, 0, 1},   // non-square
        {1, 6, 6, 4, 1, 1, 3, 3, 0, 0, 0, 0},   // stride > pool
        {1, 3, 3, 2, 2, 2, 1, 1, 3, 3, 3, 3},   // padding larger than the window: empty windows -> 0
        {1, 1, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1},   // single pixel
        {1, 7, 6, 17, 3, 3, 2, 2, 1, 1, 0, 1},
    };
    for (int it = 0; it < 200; ++it) {
        C c{rand_int(1, 2), rand_int(1, 8), rand_int(1, 8), rand_int(1, 9), rand_int(1, 4), rand_int(1, 4),
            rand_int(1, 3), rand_int(1, 3), 0, 0, 0, 0};
        c.pt = rand_int(0, static_cast<int>(c.kh) - 1);
        c.pb = rand_int(0, static_cast<int>(c.kh) - 1);
        c.pl = rand_int(0, static_cast<int>(c.kw) - 1);
        c.pr = rand_int(0, static_cast<int>(c.kw) - 1);
        if (c.h + c.pt + c.pb < c.kh || c.w + c.pl + c.pr < c.kw) continue;
        cases.push_back(c);
    }
    for (const C& c : cases) {
        PoolParams p{};
        p.n = c.n; p.h = c.h; p.w = c.w; p.c = c.c; p.kh = c.kh; p.kw = c.kw;
        p.stride_h = c.sh; p.stride_w = c.sw; p.pad_top = c.pt; p.pad_left = c.pl;
        p.d = p.kd = p.stride_d = p.od = 1;
        p.oh = out_size(c.h, c.kh, c.sh, 1, c.pt, c.pb);
        p.ow = out_size(c.w, c.kw, c.sw, 1, c.pl, c.pr);
        fvec x = rand_vec(p.n * p.h * p.w * p.c, -5.f, -1.f);  // all negative: padding must never win a max
        for (bool max : {true, false}) {
            fvec y(static_cast<std::size_t>(p.n * p.oh * p.ow * p.c), 9.f);
            pool2d_nhwc(x.data(), y.data(), p, max);
            check_close(y, pool_ref(x, p, max), 1e-6, max ? "max" : "avg");
            fvec r(y.size(), 9.f);  // the reference kernel (3-D pooling, generated code)
            graft_rt::pool_ndhwc(x.data(), r.data(), p, max);
            check_close(r, pool_ref(x, p, max), 1e-6, max ? "graft_rt max" : "graft_rt avg");
        }
    }
}

TEST_CASE("reduce_mid: max and mean", "[kernels][reduce]") {
    struct S { i64 outer, mid, inner; };
    for (S s : {S{1, 1, 1}, S{3, 1, 4}, S{2, 5, 1}, S{4, 7, 3}, S{1, 49, 64}, S{2, 9, 33}}) {
        fvec x = rand_vec(s.outer * s.mid * s.inner);
        for (bool max : {true, false}) {
            dvec ref(static_cast<std::size_t>(s.outer * s.inner));
            for (i64 o = 0; o < s.outer; ++o)
                for (i64 i = 0; i < s.inner; ++i) {
                    double acc = max ? -1e300 : 0.0;
                    for (i64 m = 0; m < s.mid; ++m) {
                        const double v = x[(o * s.mid + m) * s.inner + i];
                        acc = max ? std::max(acc, v) : acc + v;
                    }
                    ref[o * s.inner + i] = max ? acc : acc / s.mid;
                }
            fvec y(ref.size());
            graft_rt::reduce_mid(x.data(), y.data(), s.outer, s.mid, s.inner, max);
            check_close(y, ref, 1e-6);
        }
    }
}

// ================================================================ elementwise family

TEST_CASE("channel_affine: channels last and channels first, in place", "[kernels][elementwise]") {
    struct S { i64 outer, ch, inner; };
    for (S s : {S{1, 1, 1}, S{5, 3, 1}, S{2, 4, 7}, S{3, 17, 1}, S{1, 2, 64}}) {
        fvec x = rand_vec(s.outer * s.ch * s.inner), sc = rand_vec(s.ch), sh = rand_vec(s.ch);
        for (int mode = 0; mode < 3; ++mode) {  // both, scale only, shift only
            const float* scp = mode == 2 ? nullptr : sc.data();
            const float* shp = mode == 1 ? nullptr : sh.data();
            dvec ref(x.size());
            for (i64 o = 0; o < s.outer; ++o)
                for (i64 c = 0; c < s.ch; ++c)
                    for (i64 i = 0; i < s.inner; ++i) {
                        const i64 k = (o * s.ch + c) * s.inner + i;
                        ref[k] = static_cast<double>(x[k]) * (scp ? scp[c] : 1.0) + (shp ? shp[c] : 0.0);
                    }
            fvec y(x.size());
            graft_rt::channel_affine(x.data(), scp, shp, y.data(), s.outer, s.ch, s.inner);
            check_close(y, ref, 1e-6);
            fvec z = x;
            graft_rt::channel_affine(z.data(), scp, shp, z.data(), s.outer, s.ch, s.inner);
            check_close(z, ref, 1e-6, "in place");
        }
    }
}

TEST_CASE("merge: all kinds, 1..4 inputs, aliasing xs[0]", "[kernels][elementwise]") {
    const i64 size = 37;
    using graft_rt::MergeOp;
    for (MergeOp kind : {MergeOp::add, MergeOp::sub, MergeOp::mul, MergeOp::avg, MergeOp::max, MergeOp::min}) {
        for (int n = 1; n <= 4; ++n) {
            if (kind == MergeOp::sub && n != 2) continue;
            std::vector<fvec> in;
            for (int k = 0; k < n; ++k) in.push_back(rand_vec(size));
            dvec ref(size);
            for (i64 i = 0; i < size; ++i) {
                double acc = in[0][i];
                for (int k = 1; k < n; ++k) {
                    const double v = in[k][i];
                    switch (kind) {
                        case MergeOp::add: case MergeOp::avg: acc += v; break;
                        case MergeOp::sub: acc -= v; break;
                        case MergeOp::mul: acc *= v; break;
                        case MergeOp::max: acc = std::max(acc, v); break;
                        case MergeOp::min: acc = std::min(acc, v); break;
                    }
                }
                ref[i] = kind == MergeOp::avg ? acc / n : acc;
            }
            std::vector<const float*> ptrs;
            for (auto& v : in) ptrs.push_back(v.data());
            fvec y(size);
            graft_rt::merge(kind, ptrs.data(), n, y.data(), size);
            check_close(y, ref, 1e-6, "merge");
            graft_rt::merge(kind, ptrs.data(), n, in[0].data(), size);  // y aliases xs[0]
            check_close(in[0], ref, 1e-6, "merge in place");
        }
    }
}

TEST_CASE("softmax: contiguous and strided, stable, in place", "[kernels][elementwise]") {
    struct S { i64 outer, len, inner; float scale; };
    for (S s : {S{1, 1, 1, 1.f}, S{3, 10, 1, 5.f}, S{2, 7, 3, 1.f}, S{2, 5, 70, 3.f}, S{1, 4, 1, 1000.f},
                S{2, 3, 130, 1000.f}}) {
        fvec x = rand_vec(s.outer * s.len * s.inner, -s.scale, s.scale);
        dvec ref(x.size());
        for (i64 o = 0; o < s.outer; ++o)
            for (i64 i = 0; i < s.inner; ++i) {
                double mx = -1e300, sum = 0;
                for (i64 l = 0; l < s.len; ++l) mx = std::max(mx, static_cast<double>(x[(o * s.len + l) * s.inner + i]));
                for (i64 l = 0; l < s.len; ++l) sum += std::exp(x[(o * s.len + l) * s.inner + i] - mx);
                for (i64 l = 0; l < s.len; ++l) {
                    const i64 k = (o * s.len + l) * s.inner + i;
                    ref[k] = std::exp(x[k] - mx) / sum;
                }
            }
        fvec y(x.size());
        graft_rt::softmax(x.data(), y.data(), s.outer, s.len, s.inner);
        check_close(y, ref, 1e-6);
        graft_rt::softmax(x.data(), x.data(), s.outer, s.len, s.inner);
        CHECK(x == y);
    }
}

TEST_CASE("graft_rt::transpose: random ranks, shapes and permutations", "[kernels][shape]") {
    auto check = [](const std::vector<i64>& shape, const std::vector<int>& perm) {
        const int rank = static_cast<int>(shape.size());
        i64 total = 1;
        for (i64 d : shape) total *= d;
        fvec x = rand_vec(total);
        std::vector<i64> xstride(shape.size()), oshape(shape.size());
        i64 s = 1;
        for (int i = rank - 1; i >= 0; --i) {
            xstride[i] = s;
            s *= shape[i];
        }
        for (int i = 0; i < rank; ++i) oshape[i] = shape[perm[i]];
        dvec ref(static_cast<std::size_t>(total));
        std::vector<i64> idx(shape.size(), 0);
        for (i64 o = 0; o < total; ++o) {  // o walks y in row-major order; idx is y's index
            i64 xo = 0;
            for (int i = 0; i < rank; ++i) xo += idx[i] * xstride[perm[i]];
            ref[o] = x[xo];
            for (int i = rank - 1; i >= 0; --i) {
                if (++idx[i] < oshape[i]) break;
                idx[i] = 0;
            }
        }
        fvec y(static_cast<std::size_t>(total), -7.f);
        graft_rt::transpose(x.data(), y.data(), shape.data(), perm.data(), rank);
        std::ostringstream msg;
        msg << "shape";
        for (i64 d : shape) msg << ' ' << d;
        msg << " perm";
        for (int p : perm) msg << ' ' << p;
        check_close(y, ref, 0.0, msg.str());
    };
    check({1}, {0});
    check({5}, {0});
    check({37, 53}, {1, 0});
    check({3, 4}, {0, 1});
    check({2, 5, 6, 3}, {0, 3, 1, 2});   // NHWC -> NCHW
    check({2, 3, 5, 6}, {0, 2, 3, 1});   // NCHW -> NHWC
    for (i64 c = 1; c <= 5; ++c) {         // an image to channels-last: c rows interleaved
        check({1, c, 9, 13}, {0, 2, 3, 1});
        check({c, 37}, {1, 0});
        check({2, c, 4, 5}, {0, 2, 3, 1});  // batch 2: not the single interleave
    }
    check({1, 7, 1, 9}, {3, 2, 1, 0});
    check({4, 1, 1}, {2, 1, 0});
    check({2, 3, 4, 5, 2, 3, 2, 2}, {7, 0, 6, 1, 5, 2, 4, 3});
    check({7, 3, 1024}, {1, 2, 0});  // strides of 4 KB multiples: 4-line tiles, 7 = 4 + 3
    check({18, 2, 2048}, {2, 0, 1});
    for (int it = 0; it < 200; ++it) {
        const int rank = rand_int(1, 6);
        std::vector<i64> shape;
        for (int i = 0; i < rank; ++i) shape.push_back(rand_int(1, 6));
        std::vector<int> perm(static_cast<std::size_t>(rank));
        for (int i = 0; i < rank; ++i) perm[i] = i;
        std::shuffle(perm.begin(), perm.end(), rng());
        check(shape, perm);
    }
}

TEST_CASE("graft_rt::concat along the middle dimension", "[kernels][shape]") {
    for (int it = 0; it < 50; ++it) {
        const int n = rand_int(1, 4);
        const i64 outer = rand_int(1, 4), inner = rand_int(1, 5);
        std::vector<i64> lens;
        std::vector<fvec> in;
        i64 total = 0;
        for (int k = 0; k < n; ++k) {
            lens.push_back(rand_int(0, 4));
            total += lens.back();
            in.push_back(rand_vec(outer * lens.back() * inner));
        }
        dvec ref;
        for (i64 o = 0; o < outer; ++o)
            for (int k = 0; k < n; ++k)
                for (i64 j = 0; j < lens[k] * inner; ++j) ref.push_back(in[k][o * lens[k] * inner + j]);
        std::vector<const float*> ptrs;
        for (auto& v : in) ptrs.push_back(v.data());
        fvec y(static_cast<std::size_t>(outer * total * inner));
        graft_rt::concat(ptrs.data(), lens.data(), n, y.data(), outer, inner);
        check_close(y, ref, 0.0);
    }
}

// ================================================================ recurrent

}  // namespace graft_test_kernels
