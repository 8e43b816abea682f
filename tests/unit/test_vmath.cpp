// The vectorized tanh / sigmoid and recurrent cells (vmath.cpp) on every instruction set the
// CPU supports, against double-precision std::tanh / std::exp over a dense sweep that includes
// the clamping points, the subnormal range, +-100, infinities and NaN.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cpu/gemm/gemm.hpp"
#include "cpu/kernels.hpp"
#include "cpu/vmath.hpp"

#include "isa_support.hpp"

namespace graft_test_vmath {

namespace gg = graft::cpu::gemm;
using graft_test::IsaGuard;
using graft_test::isas;
namespace kern = graft::cpu;
namespace vm = graft::cpu::vmath;
using i64 = std::int64_t;

namespace {

double dsig(double x) { return 1 / (1 + std::exp(-x)); }

/// -110..110 in steps of 3.7e-4, a fine sweep around 0, every float of +-[7.9, 8.1] (tanh's
/// clamp is at 8, where its roundings come closest to carrying it past 1), and the special points.
std::vector<float> sweep() {
    std::vector<float> x;
    for (double v = -110; v <= 110; v += 0.00037) x.push_back(static_cast<float>(v));
    for (double v = -1e-3; v <= 1e-3; v += 3e-7) x.push_back(static_cast<float>(v));
    for (float v = 7.9f; v <= 8.1f; v = std::nextafter(v, 9.f)) x.push_back(v), x.push_back(-v);
    for (float v : {0.f,
                    -0.f,
                    1e-30f,
                    -1e-30f,
                    1e-40f,
                    8.f,
                    -8.f,
                    9.01f,
                    17.f,
                    87.3f,
                    -87.3f,
                    88.3f,
                    -88.8f,
                    -103.9f,
                    -104.f,
                    -104.5f,
                    100.f,
                    -100.f,
                    1e30f,
                    -1e30f,
                    std::numeric_limits<float>::max(),
                    -std::numeric_limits<float>::max()})
        x.push_back(v);
    return x;
}

}  // namespace

TEST_CASE("vmath: tanh and sigmoid within a few ulp of double over the whole range", "[kernels][activation]") {
    IsaGuard guard;
    const auto xs = sweep();
    const i64 n = static_cast<i64>(xs.size());
    std::vector<float> t(xs.size()), s(xs.size());
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        vm::tanh(xs.data(), t.data(), n);
        vm::sigmoid(xs.data(), s.data(), n);
        double t_abs = 0, t_rel = 0, s_rel = 0, s_sub = 0;
        bool finite = true, in_range = true;
        for (std::size_t i = 0; i < xs.size(); ++i) {
            const double x = xs[i], want_t = std::tanh(x), want_s = dsig(x);
            finite = finite && std::isfinite(t[i]) && std::isfinite(s[i]);
            in_range = in_range && t[i] >= -1.f && t[i] <= 1.f && s[i] >= 0.f && s[i] <= 1.f;
            const double et = std::fabs(t[i] - want_t);
            t_abs = std::max(t_abs, et);
            if (std::fabs(want_t) > 1e-30) t_rel = std::max(t_rel, et / std::fabs(want_t));
            const double es = std::fabs(s[i] - want_s);
            if (want_s >= 1.2e-38)
                s_rel = std::max(s_rel, es / want_s);
            else
                s_sub = std::max(s_sub, es);  // subnormal results: absolute
        }
        CHECK(finite);
        CHECK(in_range);
        INFO("tanh max abs " << t_abs << " rel " << t_rel << "; sigmoid max rel " << s_rel << " subnormal abs "
                             << s_sub);
        CHECK(t_abs <= 5e-7);
        CHECK(t_rel <= 5e-7);
        CHECK(s_rel <= 4e-7);
        CHECK(s_sub <= 8e-45);
        // Saturation and exact points.
        const float probe[] = {100.f, -100.f, 0.f, std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity()};
        float pt[5], ps[5];
        vm::tanh(probe, pt, 5);
        vm::sigmoid(probe, ps, 5);
        CHECK(pt[0] == Approx(1.f).margin(3e-7));
        CHECK(pt[1] == Approx(-1.f).margin(3e-7));
        CHECK(pt[2] == 0.f);
        CHECK(pt[3] == Approx(1.f).margin(3e-7));
        CHECK(pt[4] == Approx(-1.f).margin(3e-7));
        CHECK(ps[0] == 1.f);
        CHECK(ps[1] > 0.f);  // e^-100 = 3.7e-44, a subnormal
        CHECK(ps[1] < 1e-40f);
        CHECK(ps[2] == 0.5f);
        CHECK(ps[3] == 1.f);
        CHECK(ps[4] == 0.f);
    }
}

TEST_CASE("vmath: GELU within 1.5e-7 |x| of double precision's x erfc(-x / sqrt 2) / 2", "[kernels][activation]") {
    IsaGuard guard;
    std::vector<float> x;
    for (double v = -14; v <= 14; v += 1.0 / 1024) x.push_back(static_cast<float>(v));
    for (float v : {0.f, -0.f, 1e-30f, -1e-30f, 3e4f, -3e4f}) x.push_back(v);
    x.push_back(std::numeric_limits<float>::quiet_NaN());
    const i64 n = static_cast<i64>(x.size());
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        std::vector<float> y(x.size() + 1, -7.f);
        vm::gelu(x.data(), y.data(), n);
        double worst = 0;  // the error over the bound's x-proportional part
        for (i64 i = 0; i + 1 < n; ++i) {
            const double v = x[i], want = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
            const double err = std::fabs(y[i] - want);
            // The rational erf's 2e-8 and the roundings of 1 + erf where it cancels (x < 0), times
            // |x| / 2; plus the rounding of the result.
            const double bound = 1.5e-7 * std::fabs(v) + 4 * std::numeric_limits<float>::epsilon() * std::fabs(want) + 1e-30;
            INFO("x = " << v << ": got " << y[i] << ", want " << want);
            CHECK(err <= bound);
            worst = std::max(worst, err / std::max(std::fabs(v), 1e-30));
        }
        CHECK(std::isnan(y[n - 1]));
        CHECK(y[n] == -7.f);  // nothing written past n
        WARN("gelu " << gg::isa_name(isa) << ": max |error| / |x| = " << worst);
    }
}

TEST_CASE("vmath: NaN propagates, tails and in-place calls", "[kernels][activation]") {
    IsaGuard guard;
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        for (i64 n : {1, 3, 4, 7, 8, 15, 16, 17, 31, 33}) {
            std::vector<float> x(static_cast<std::size_t>(n) + 1, 42.f);  // x[n] is a guard
            for (i64 i = 0; i < n; ++i) x[i] = 0.37f * static_cast<float>(i) - 2.f;
            x[static_cast<std::size_t>(n / 2)] = std::numeric_limits<float>::quiet_NaN();
            std::vector<float> t(x.size(), -7.f), s(x.size(), -7.f);
            vm::tanh(x.data(), t.data(), n);
            vm::sigmoid(x.data(), s.data(), n);
            for (i64 i = 0; i < n; ++i) {
                if (i == n / 2) {
                    CHECK(std::isnan(t[i]));
                    CHECK(std::isnan(s[i]));
                } else {
                    CHECK(t[i] == Approx(std::tanh(static_cast<double>(x[i]))).margin(5e-7));
                    CHECK(s[i] == Approx(dsig(x[i])).margin(3e-7));
                }
            }
            CHECK(t[n] == -7.f);  // nothing written past n
            CHECK(s[n] == -7.f);
            std::vector<float> inplace = x;  // aliasing: y == x
            vm::sigmoid(inplace.data(), inplace.data(), n);
            for (i64 i = 0; i < n; ++i)
                if (i != n / 2) CHECK(inplace[i] == s[i]);
        }
    }
}

TEST_CASE("vmath: softmax rows within a few ulp of double precision (and the float x - max), NaN and infinities as std::exp gives them", "[kernels][activation]") {
    IsaGuard guard;
    std::mt19937 rng(17);
    std::uniform_real_distribution<float> u(-30.f, 30.f);
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        for (i64 len : {1, 3, 7, 8, 9, 16, 33, 64, 100}) {
            const i64 rows = 3;
            std::vector<float> x(static_cast<std::size_t>(rows * len + 1), 42.f), y(x.size(), -7.f);  // a guard past the rows
            for (i64 i = 0; i < rows * len; ++i) x[i] = u(rng);
            vm::softmax_rows(x.data(), y.data(), rows, len);
            for (i64 r = 0; r < rows; ++r) {
                double mx = -1e300, sum = 0;
                for (i64 l = 0; l < len; ++l) mx = std::max(mx, double(x[r * len + l]));
                for (i64 l = 0; l < len; ++l) sum += std::exp(double(x[r * len + l]) - mx);
                for (i64 l = 0; l < len; ++l) {
                    const double want = std::exp(double(x[r * len + l]) - mx) / sum;
                    INFO("len " << len << " row " << r << " at " << l << ": got " << double(y[r * len + l]) << " want " << want);
                    // A few ulp, plus the rounding of x - max in float (relative eps |x - max|), as any float softmax has.
                    const double arg = std::fabs(double(x[r * len + l]) - mx);
                    CHECK(std::fabs(y[r * len + l] - want) <= (8 + arg) * std::numeric_limits<float>::epsilon() * want + 1e-37);
                }
            }
            CHECK(y[rows * len] == -7.f);
            // A scale folded in (attention's 1/sqrt(d)) and a negative one: softmax(s x).
            for (float sc : {0.125f, -0.5f}) {
                std::vector<float> ys(x.size(), -7.f);
                vm::softmax_rows(x.data(), ys.data(), rows, len, sc);
                for (i64 r = 0; r < rows; ++r) {
                    double mx = -1e300, sum = 0;
                    for (i64 l = 0; l < len; ++l) mx = std::max(mx, double(sc) * x[r * len + l]);
                    for (i64 l = 0; l < len; ++l) sum += std::exp(double(sc) * x[r * len + l] - mx);
                    for (i64 l = 0; l < len; ++l) {
                        const double want = std::exp(double(sc) * x[r * len + l] - mx) / sum;
                        const double arg = std::fabs(double(sc) * x[r * len + l] - mx);
                        INFO("scale " << sc << " len " << len << " row " << r << " at " << l);
                        CHECK(std::fabs(ys[r * len + l] - want) <= (8 + arg) * std::numeric_limits<float>::epsilon() * want + 1e-37);
                    }
                }
                CHECK(ys[rows * len] == -7.f);
            }
            std::vector<float> inplace = x;  // aliasing: y == x
            vm::softmax_rows(inplace.data(), inplace.data(), rows, len);
            for (i64 i = 0; i < rows * len; ++i) CHECK(inplace[i] == y[i]);
        }
        std::vector<float> bad = {1.f, std::numeric_limits<float>::quiet_NaN(), 2.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
        std::vector<float> out(bad.size());
        vm::softmax_rows(bad.data(), out.data(), 1, static_cast<i64>(bad.size()));
        for (float v : out) CHECK(std::isnan(v));  // as graft_rt::softmax: the NaN reaches the sum
        std::vector<float> big = {std::numeric_limits<float>::infinity(), 0.f, 1.f};
        vm::softmax_rows(big.data(), out.data(), 1, 3);
        CHECK(std::isnan(out[0]));  // inf - inf
    }
}

TEST_CASE("vmath: layer normalization rows against double-precision statistics", "[kernels]") {
    IsaGuard guard;
    std::mt19937 rng(18);
    std::uniform_real_distribution<float> u(-3.f, 5.f);
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        for (i64 k : {1, 5, 8, 17, 64, 256, 1000})
            for (bool affine : {false, true}) {
                const i64 rows = 3;
                std::vector<float> x(static_cast<std::size_t>(rows * k + 1), 42.f), y(x.size(), -7.f), g(k), b(k);
                for (i64 i = 0; i < rows * k; ++i) x[i] = u(rng);
                for (i64 i = 0; i < k; ++i) g[i] = u(rng), b[i] = u(rng);
                const float eps = 1e-3f;
                vm::layer_norm_rows(x.data(), affine ? g.data() : nullptr, affine ? b.data() : nullptr, y.data(), rows, k, eps);
                for (i64 r = 0; r < rows; ++r) {
                    double mean = 0, var = 0;
                    for (i64 i = 0; i < k; ++i) mean += x[r * k + i];
                    mean /= double(k);
                    for (i64 i = 0; i < k; ++i) var += (x[r * k + i] - mean) * (x[r * k + i] - mean);
                    const double inv = 1 / std::sqrt(var / double(k) + eps);
                    for (i64 i = 0; i < k; ++i) {
                        const double norm = (x[r * k + i] - mean) * inv;
                        const double want = affine ? norm * g[i] + b[i] : norm;
                        INFO("k " << k << " row " << r << " at " << i);
                        CHECK(std::fabs(y[r * k + i] - want) <= 2e-6 * (1 + std::fabs(norm) * (affine ? std::fabs(g[i]) : 1.0)) + 1e-6 * std::fabs(want));
                    }
                }
                CHECK(y[rows * k] == -7.f);
            }
    }
}

TEST_CASE("vmath: LSTM cell and GRU blend against double precision", "[kernels][recurrent]") {
    IsaGuard guard;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> wide(-6.f, 6.f), cd(-3.f, 3.f);
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        for (i64 u : {1, 5, 16, 19, 37, 128}) {
            INFO("u " << u);
            std::vector<float> z(static_cast<std::size_t>(4 * u)), c(static_cast<std::size_t>(u)),
                h(static_cast<std::size_t>(u) + 1, 9.f);
            for (auto& v : z) v = wide(rng);
            for (auto& v : c) v = cd(rng);
            z[0] = 100.f, z[static_cast<std::size_t>(u)] = -100.f;  // saturated i and f gates
            const std::vector<float> c0 = c;
            vm::lstm_cell(z.data(), c.data(), h.data(), u);
            double worst = 0;
            for (i64 j = 0; j < u; ++j) {
                const double i = dsig(z[j]), f = dsig(z[u + j]), g = std::tanh(static_cast<double>(z[2 * u + j]));
                const double o = dsig(z[3 * u + j]);
                const double cn = f * c0[j] + i * g, hn = o * std::tanh(cn);
                worst = std::max({worst, std::fabs(c[j] - cn), std::fabs(h[j] - hn)});
            }
            CHECK(worst <= 1e-6);
            CHECK(h[static_cast<std::size_t>(u)] == 9.f);

            std::vector<float> zg(static_cast<std::size_t>(u)), hh(static_cast<std::size_t>(u)),
                hg(static_cast<std::size_t>(u));
            for (auto& v : zg) v = static_cast<float>(dsig(wide(rng)));
            for (auto& v : hh) v = wide(rng);
            for (auto& v : hg) v = cd(rng);
            const std::vector<float> h0 = hg;
            vm::gru_blend(zg.data(), hh.data(), hg.data(), u);
            worst = 0;
            for (i64 j = 0; j < u; ++j) {
                const double want =
                    zg[j] * static_cast<double>(h0[j]) + (1 - zg[j]) * std::tanh(static_cast<double>(hh[j]));
                worst = std::max(worst, std::fabs(hg[j] - want));
            }
            CHECK(worst <= 1e-6);
        }
    }
}

TEST_CASE("activation: sigmoid and tanh go through the vectorized kernels", "[kernels][activation]") {
    std::vector<float> x;
    for (int i = -400; i <= 400; ++i) x.push_back(static_cast<float>(i) * 0.05f);
    std::vector<float> y(x.size());
    kern::ActParams a;
    a.kind = kern::Act::sigmoid;
    kern::activate(x.data(), y.data(), static_cast<i64>(x.size()), a);
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == Approx(dsig(x[i])).epsilon(4e-7).margin(1e-30));
    a.kind = kern::Act::tanh;
    kern::activate(x.data(), y.data(), static_cast<i64>(x.size()), a);
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == Approx(std::tanh(static_cast<double>(x[i]))).margin(5e-7));
}

}  // namespace graft_test_vmath
