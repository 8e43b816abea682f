// Reduced-precision convolutions (qgemm.hpp's qconv2d) on every instruction set this CPU runs,
// against the schemes written out here independently over patches gathered by plain index
// arithmetic (taps outside the input read zero):
//  - int8: each patch quantised on its own (symmetric, scale max |patch| / 127; on AVX-512
//    VNNI asymmetric over 0..255, scale range / 255), each output channel's weights per channel,
//    symmetric, round to nearest; the int32 sum exact, so the result must equal the scheme's to
//    float rounding;
//  - bf16: every operand rounded to the nearest bfloat16 (ties to even), the products summed in
//    double; the kernels' float sums may differ by K 2^-24 of the products' magnitude.
// Geometries cover strides, dilation, padding on every side, 1x1 (the rows of x as they are),
// several blocks of output pixels, and the pool splitting the blocks or the columns.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cpu/gemm/qgemm.hpp"
#include "cpu/threadpool.hpp"

#include "isa_support.hpp"
#include "quant_ref.hpp"

namespace graft_test_qconv {

using namespace gemm_test;
using graft::Precision;
using quant_ref::bf16;

namespace {

/// The int8 scheme's values and scale (quant_ref.hpp) as doubles.
std::vector<double> int8_values(const quant_ref::Quantised& q, double& scale) {
    scale = q.scale;
    return std::vector<double>(q.q.begin(), q.q.end());
}

struct Case {
    i64 n, h, w, cin, kh, kw, cout, sh, sw, dh, dw, pt, pl;
    bool bias, residual;
    kern::Act act;
};

void check(const Case& t, Precision kind, std::mt19937& rng, graft::cpu::ThreadPool* pool) {
    graft_rt::Conv2DParams p{t.n, t.h, t.w, t.cin, t.kh, t.kw, t.cout, t.sh, t.sw, t.dh, t.dw, t.pt, t.pl, 0, 0};
    p.oh = (t.h + 2 * t.pt - t.dh * (t.kh - 1) - 1) / t.sh + 1;
    p.ow = (t.w + 2 * t.pl - t.dw * (t.kw - 1) - 1) / t.sw + 1;
    const i64 K = t.kh * t.kw * t.cin, M = t.n * p.oh * p.ow, N = t.cout;
    const auto x = rand_vec(rng, t.n * t.h * t.w * t.cin, -2.f, 2.f), w = rand_vec(rng, K * N, -0.5f, 0.5f);
    const auto bias = rand_vec(rng, N), res = rand_vec(rng, M * N);
    std::vector<float> y(M * N + 1, 7.f);  // y[M * N] is a guard
    kern::ActParams act{t.act};
    gg::Epilogue e;
    e.bias = t.bias ? bias.data() : nullptr;
    e.residual = t.residual ? res.data() : nullptr;
    e.ldr = N;
    e.act = &act;
    const int threads = pool ? pool->size() : 1;
    const auto block = gg::qpack(w.data(), N, K, N, kind);
    const gg::QMatrix view = gg::qview(block.data(), K, N);
    const bool asym = view.csum && gg::active_isa() == gg::Isa::avx512;  // the VNNI quads' rows
    std::vector<float> work(gg::qconv2d_work_floats(p, threads));
    gg::qconv2d(p, x.data(), view, y.data(), e, work.data(), pool, threads);

    std::vector<std::vector<double>> wq(static_cast<std::size_t>(N));
    std::vector<double> sw(static_cast<std::size_t>(N), 1.0);
    for (i64 c = 0; c < N; ++c) {
        std::vector<float> col(static_cast<std::size_t>(K));
        for (i64 k = 0; k < K; ++k) col[k] = w[k * N + c];
        if (kind == Precision::int8) {
            wq[c] = int8_values(quant_ref::quantise(col), sw[c]);
        } else {
            for (float v : col) wq[c].push_back(bf16(v));
        }
    }
    double worst = 0;
    std::vector<float> patch(static_cast<std::size_t>(K));
    for (i64 m = 0; m < M; ++m) {
        const i64 b = m / (p.oh * p.ow), oy = m / p.ow % p.oh, ox = m % p.ow;
        for (i64 ky = 0; ky < t.kh; ++ky)
            for (i64 kx = 0; kx < t.kw; ++kx)
                for (i64 ci = 0; ci < t.cin; ++ci) {
                    const i64 iy = oy * t.sh - t.pt + ky * t.dh, ix = ox * t.sw - t.pl + kx * t.dw;
                    const bool in = iy >= 0 && iy < t.h && ix >= 0 && ix < t.w;
                    patch[(ky * t.kw + kx) * t.cin + ci] = in ? x[((b * t.h + iy) * t.w + ix) * t.cin + ci] : 0.f;
                }
        double sa = 1.0;
        std::vector<double> a;
        if (kind == Precision::int8) {
            a = int8_values(asym ? quant_ref::quantise_asym(patch) : quant_ref::quantise(patch), sa);
        } else {
            for (float v : patch) a.push_back(bf16(v));
        }
        for (i64 c = 0; c < N; ++c) {
            double sum = 0, mag = 0;
            for (i64 k = 0; k < K; ++k) sum += a[k] * wq[c][k], mag += std::fabs(a[k] * wq[c][k]);
            double base = t.bias ? bias[c] : 0.0;
            if (t.residual) base += res[m * N + c];
            const double want = act_ref(base + sum * sa * sw[c], {t.act});
            const double scale = std::fabs(base) + mag * sa * sw[c];
            const double tol = 1e-6 + (kind == Precision::int8 ? 1e-5 : 2.0 * (K + 2) * std::ldexp(1.0, -24)) * scale;
            worst = std::max(worst, std::fabs(y[m * N + c] - want) / tol);
        }
    }
    INFO(graft::precision_name(kind) << " n=" << t.n << " " << t.h << "x" << t.w << "x" << t.cin << " k " << t.kh << "x"
                                     << t.kw << " cout " << t.cout << " stride " << t.sh << "," << t.sw << " dil "
                                     << t.dh << "," << t.dw << " pad " << t.pt << "," << t.pl << " threads "
                                     << threads);
    CHECK(worst <= 1.0);
    CHECK(y[M * N] == 7.f);
}

const Case kCases[] = {
    // n  h   w  cin kh kw cout sh sw dh dw pt pl  bias  res   act
    {1, 9, 11, 5, 3, 3, 20, 1, 1, 1, 1, 1, 1, true, false, kern::Act::relu},     // padding on every side
    {2, 12, 10, 7, 3, 3, 33, 2, 2, 1, 1, 1, 1, false, true, kern::Act::linear},  // stride 2, a residual
    {1, 13, 13, 3, 7, 7, 16, 2, 2, 1, 1, 3, 3, true, false, kern::Act::relu},    // a stem: one tap row per copy
    {1, 10, 12, 6, 3, 3, 17, 1, 1, 2, 2, 2, 2, true, true, kern::Act::relu},     // dilated
    {3, 8, 8, 40, 1, 1, 24, 1, 1, 1, 1, 0, 0, true, false, kern::Act::linear},   // pointwise: x's rows
    {1, 8, 8, 40, 1, 1, 24, 2, 2, 1, 1, 0, 0, false, false, kern::Act::tanh},    // 1x1, stride 2 (gathered)
    {1, 5, 1, 9, 3, 1, 12, 1, 1, 1, 1, 1, 0, true, false, kern::Act::linear},    // a 1-D convolution
    {2, 40, 40, 16, 3, 3, 40, 1, 1, 1, 1, 1, 1, true, false, kern::Act::relu},   // many blocks of pixels
};

}  // namespace

TEST_CASE("qconv2d: int8 and bf16 convolutions compute their schemes over the patches on every ISA", "[gemm]") {
    IsaGuard guard;
    std::mt19937 rng(21);
    graft::cpu::ThreadPool two(2);
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        for (Precision kind : {Precision::int8, Precision::bf16})
            for (const Case& c : kCases) {
                check(c, kind, rng, nullptr);
                check(c, kind, rng, &two);
            }
    }
}

}  // namespace graft_test_qconv
