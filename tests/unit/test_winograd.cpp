// Winograd F(4x4,3x3) and F(2x2,3x3) against an independent double-precision direct
// convolution (written here, not graft's), on every ISA the CPU supports, 1 and 2 threads, odd
// shapes and the bias / residual / activation epilogue; the Conv2D kernel's choice of them.
//
// Tolerance: |y - ref| <= 1e-4 * max(1, max |conv + bias + residual|) over the whole output (the project's
// tolerance for Winograd: the transforms amplify float rounding, so the error scales with the
// magnitude of the result rather than per element). Seen: up to 1e-5 for F(4x4) (Cin = 260-300),
// 7e-7 for F(2x2). GRAFT_TEST_VERBOSE=1 prints the largest relative error seen (2: every case).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cpu/gemm/conv_kernel.hpp"
#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/winograd.hpp"
#include "cpu/threadpool.hpp"

#include "../integration/support.hpp"
#include "isa_support.hpp"

namespace graft_test_winograd {

using namespace gemm_test;

namespace {

constexpr double kTol = 1e-4;
double g_worst = 0;  // largest relative error over all cases (reported when verbose)

/// 3x3 stride-1 geometry: "same" (TF: pad (2)/2 top/left) or "valid".
kern::Conv2DParams geom(i64 n, i64 h, i64 w, i64 cin, i64 cout, bool same) {
    kern::Conv2DParams p{};
    p.n = n, p.h = h, p.w = w, p.cin = cin, p.kh = 3, p.kw = 3, p.cout = cout;
    p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
    if (same) {
        p.oh = h, p.ow = w, p.pad_top = 1, p.pad_left = 1;
    } else {
        p.oh = h - 2, p.ow = w - 2;
    }
    return p;
}

struct Data {
    std::vector<float> x, w, bias, res;
};

Data make_data(const kern::Conv2DParams& p, std::mt19937& rng) {
    return {rand_vec(rng, p.n * p.h * p.w * p.cin),
            rand_vec(rng, 9 * p.cin * p.cout), rand_vec(rng, p.cout),
            rand_vec(rng, p.n * p.oh * p.ow * p.cout)};
}

/// act(conv(x, w) + bias + residual), direct, in double; `mag` gets max(1, max |pre-activation|).
std::vector<double> reference(const kern::Conv2DParams& p, const Data& d, bool bias, bool res, kern::Act a,
                              double& mag) {
    std::vector<double> y(static_cast<std::size_t>(p.n * p.oh * p.ow * p.cout));
    mag = 1;
    for (i64 n = 0; n < p.n; ++n)
        for (i64 oy = 0; oy < p.oh; ++oy)
            for (i64 ox = 0; ox < p.ow; ++ox)
                for (i64 co = 0; co < p.cout; ++co) {
                    double s = bias ? d.bias[co] : 0.0;
                    for (i64 ky = 0; ky < 3; ++ky)
                        for (i64 kx = 0; kx < 3; ++kx) {
                            const i64 iy = oy - p.pad_top + ky, ix = ox - p.pad_left + kx;
                            if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                            for (i64 ci = 0; ci < p.cin; ++ci)
                                s += static_cast<double>(d.x[((n * p.h + iy) * p.w + ix) * p.cin + ci]) *
                                     d.w[((ky * 3 + kx) * p.cin + ci) * p.cout + co];
                        }
                    const std::size_t at = static_cast<std::size_t>(((n * p.oh + oy) * p.ow + ox) * p.cout + co);
                    if (res) s += d.res[at];
                    mag = std::max(mag, std::fabs(s));
                    y[at] = act_ref(s, {a});
                }
    return y;
}

/// Largest |got - want| relative to the magnitude of the convolution's result (before the
/// activation: a saturating activation does not shrink the rounding it inherits near zero).
double rel_error(const std::vector<float>& got, const std::vector<double>& want, double mag) {
    double err = 0;
    for (std::size_t i = 0; i < want.size(); ++i) err = std::max(err, std::fabs(got[i] - want[i]));
    return err / mag;
}

struct Case {
    i64 n, h, w, cin, cout;
    bool same, bias, res;
    kern::Act act;
    int tile = 4;  // F(4x4,3x3) or F(2x2,3x3)
};

void check(const Case& c, std::mt19937& rng, graft::cpu::ThreadPool* pool) {
    const auto p = geom(c.n, c.h, c.w, c.cin, c.cout, c.same);
    INFO("F(" << c.tile << "x" << c.tile << ") n=" << c.n << " h=" << c.h << " w=" << c.w << " cin=" << c.cin
              << " cout=" << c.cout << " same=" << c.same << " bias=" << c.bias << " res=" << c.res
              << " act=" << static_cast<int>(c.act) << " threads=" << graft::cpu::pool_size(pool)
              << " isa=" << gg::isa_name(gg::active_isa()));
    REQUIRE(gg::Winograd::applicable(p));
    const Data d = make_data(p, rng);
    const auto u = gg::Winograd::transform_weights(d.w.data(), p.cin, p.cout, c.tile);
    const gg::Winograd wg(p, c.tile, u.data(), 2);
    REQUIRE(wg.tile() == c.tile);
    std::vector<float> ws(wg.workspace_floats(), std::nanf(""));  // scratch must be written before it is read
    std::vector<float> y(d.res.size(), std::nanf(""));
    kern::ActParams act{c.act};
    gg::Epilogue e;
    e.bias = c.bias ? d.bias.data() : nullptr;
    e.residual = c.res ? d.res.data() : nullptr;
    e.ldr = p.cout;
    e.act = &act;
    wg.run(d.x.data(), y.data(), e, ws.data(), pool);
    double mag = 1;
    const auto want = reference(p, d, c.bias, c.res, c.act, mag);
    const double err = rel_error(y, want, mag);
    g_worst = std::max(g_worst, err);
    if (std::getenv("GRAFT_TEST_VERBOSE") && std::string(std::getenv("GRAFT_TEST_VERBOSE")) == "2")
        std::printf("  F(%dx%d) n=%ld h=%ld w=%ld cin=%ld cout=%ld threads=%d isa=%s: %.3g\n", c.tile, c.tile,
                    (long)c.n, (long)c.h, (long)c.w, (long)c.cin, (long)c.cout, graft::cpu::pool_size(pool),
                    gg::isa_name(gg::active_isa()), err);
    CAPTURE(err);
    REQUIRE(err <= kTol);
}

void report() {
    if (std::getenv("GRAFT_TEST_VERBOSE")) std::printf("winograd: largest relative error %.3g\n", g_worst);
}

}  // namespace

TEST_CASE("winograd: odd shapes, paddings and epilogues match a direct double convolution", "[winograd]") {
    IsaGuard guard;
    std::mt19937 rng(2024);
    const std::vector<Case> cases = {
        {1, 8, 8, 16, 16, true, false, false, kern::Act::linear},  // whole tiles
        {1, 7, 9, 5, 3, true, true, false, kern::Act::relu},       // partial edge tiles, tiny channels
        {2, 3, 2, 17, 33, true, true, true, kern::Act::relu},      // H, W < 4, batch 2
        {1, 1, 1, 20, 18, true, true, false, kern::Act::linear},   // 1x1 spatial
        {3, 1, 6, 8, 40, true, false, true, kern::Act::tanh},      // one row of pixels, a non-fused activation
        {1, 6, 6, 31, 17, false, true, false, kern::Act::relu},    // valid: 4x4 output
        {2, 11, 5, 24, 70, false, true, true, kern::Act::linear},  // valid, partial tiles
        {1, 3, 3, 9, 9, false, false, false, kern::Act::linear},   // valid: 1x1 output
        {2, 13, 10, 64, 80, true, true, true, kern::Act::relu},    // several tile blocks and channel groups
        {1, 9, 7, 300, 20, true, true, false, kern::Act::relu},    // Cin above one k block (256)
        {4, 14, 14, 48, 130, true, true, true, kern::Act::relu},   // Cout over three groups, ragged panel
        {2, 20, 20, 260, 24, true, true, true, kern::Act::relu},   // Cin in two k blocks, five tile blocks
    };
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        for (Case c : cases)
            for (int tile : {4, 2}) {
                c.tile = tile;
                check(c, rng, nullptr);
            }
    }
    report();
}

TEST_CASE("winograd: two threads split tile blocks or output channels without changing results", "[winograd]") {
    std::mt19937 rng(99);
    graft::cpu::ThreadPool pool(2);
    REQUIRE(pool.size() == 2);
    const std::vector<Case> cases = {
        {1, 56, 56, 64, 64, true, true, true, kern::Act::relu},    // many tiles: blocks
        {1, 14, 14, 96, 96, true, true, false, kern::Act::relu},   // 16 tiles: fewer blocks than threads
        {1, 4, 4, 128, 48, true, false, true, kern::Act::linear},  // one tile: channels split
        {5, 9, 9, 33, 35, false, true, true, kern::Act::tanh},     // batch, valid, odd channels
        {2, 17, 23, 40, 24, true, true, false, kern::Act::relu},
        {1, 12, 12, 64, 16, true, true, true, kern::Act::relu},  // 9 tiles, one panel: tiles split
    };
    for (Case c : cases)
        for (int tile : {4, 2}) {
            c.tile = tile;
            check(c, rng, &pool);
            check(c, rng, nullptr);
        }
    report();
}

namespace {

/// Just enough of a BuildContext for make_conv2d_kernel: tensors are given as fixed pointers,
/// the workspace lives in `arena`.
class TestBuilder final : public graft::native::BuildContext {
public:
    const graft::Operator& op() const override { throw std::logic_error("no operator"); }
    graft::native::Slot slot(const graft::Variable*) override { throw std::logic_error("no variables"); }
    const float* keep(std::shared_ptr<const std::vector<float>> data) override {
        kept.push_back(data);
        return data->data();
    }
    graft::native::Slot workspace(std::size_t floats) override {
        workspace_floats = std::max(workspace_floats, floats);
        return graft::native::Slot{nullptr, 0};
    }
    std::vector<std::shared_ptr<const std::vector<float>>> kept;
    std::size_t workspace_floats = 0;
};

graft::native::Slot at(const std::vector<float>& v) { return graft::native::Slot{v.data(), 0}; }

}  // namespace

TEST_CASE("winograd: the Conv2D kernel, with and without GRAFT_WINOGRAD=0, matches the reference", "[winograd]") {
    const graft_test::ScopedEnv winograd("GRAFT_WINOGRAD", "1");
    std::mt19937 rng(5);
    graft::cpu::ThreadPool pool(2);
    // 20x18: F(4x4) (2 x 25 tiles); 7x7: F(2x2) (16 tiles of 2x2, only 4 of 4x4).
    for (const auto& [p, tile] :
         {std::pair{geom(2, 20, 18, 32, 48, true), 4}, std::pair{geom(1, 7, 7, 40, 24, true), 2}}) {
        const Data d = make_data(p, rng);
        double mag = 1;
        const auto want = reference(p, d, true, true, kern::Act::relu, mag);
        for (const char* env : {"1", "0"}) {
            winograd.set(env);
            const bool on = env[0] == '1';
            INFO("h=" << p.h << " GRAFT_WINOGRAD=" << env);
            CHECK(gg::Winograd::choose(p) == (on ? tile : 0));
            TestBuilder b;
            std::vector<float> y(d.res.size(), std::nanf(""));
            const kern::ActParams act{kern::Act::relu};
            const graft::ConstantVariable w("w", graft::OrderHWCN, {p.kh, p.kw, p.cin, p.cout},
                                            std::make_shared<const std::vector<float>>(d.w));
            auto k = gg::make_conv2d_kernel(b, p, w, at(d.x), at(d.bias), at(d.res), at(y), act);
            // Winograd asks for scratch (one region per thread); the implicit GEMM needs none.
            CHECK((b.workspace_floats > 0) == on);
            std::vector<float> arena(std::max<std::size_t>(b.workspace_floats, 1), std::nanf(""));
            for (graft::cpu::ThreadPool* tp : {static_cast<graft::cpu::ThreadPool*>(nullptr), &pool}) {
                std::fill(y.begin(), y.end(), std::nanf(""));
                k->run(graft::native::RunContext{reinterpret_cast<std::byte*>(arena.data()), tp});
                const double err = rel_error(y, want, mag);
                CAPTURE(err);
                CHECK(err <= (on ? kTol : 1e-5));
            }
        }
    }
}

TEST_CASE("winograd: applicability and the GRAFT_WINOGRAD switch", "[winograd]") {
    auto p = geom(1, 56, 56, 64, 64, true);
    CHECK(gg::Winograd::applicable(p));
    {  // GRAFT_WINOGRAD only inside this block
        const graft_test::ScopedEnv winograd("GRAFT_WINOGRAD", "1");
        CHECK(gg::Winograd::choose(p) == 4);
        CHECK(gg::Winograd::choose(geom(1, 7, 7, 512, 512, true)) == 2);  // 4 tiles of 4x4, 16 of 2x2
        CHECK(gg::Winograd::choose(geom(2, 7, 7, 512, 512, true)) == 2);  // 8 tiles of 4x4, large U
        CHECK(gg::Winograd::choose(geom(4, 7, 7, 512, 512, true)) == 4);  // 16 tiles of 4x4
        CHECK(gg::Winograd::choose(geom(2, 8, 8, 64, 64, true)) == 4);    // 8 tiles of 4x4, small U
        CHECK(gg::Winograd::choose(geom(1, 4, 4, 64, 64, true)) == 0);    // too few tiles
        CHECK(gg::Winograd::choose(geom(1, 56, 56, 8, 64, true)) == 0);   // too few channels
        winograd.set("0");
        CHECK_FALSE(gg::Winograd::preferred(p));
    }
    auto q = p;
    q.stride_h = 2;
    CHECK_FALSE(gg::Winograd::applicable(q));
    q = p;
    q.dil_w = 2;
    CHECK_FALSE(gg::Winograd::applicable(q));
    q = p;
    q.kh = 5;
    CHECK_FALSE(gg::Winograd::applicable(q));
}

}  // namespace graft_test_winograd
