// pool2d_nhwc on every instruction set the CPU has, with channel counts that use the two-vector
// blocks, the one-vector step and the scalar tail (the other pooling test covers the geometry with
// few channels), alone and with a thread pool, against a direct double loop.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cpu/kernels.hpp"
#include "cpu/threadpool.hpp"
#include "isa_support.hpp"

namespace graft_test_kernels_pool {

using namespace graft::cpu;
using i64 = std::int64_t;

TEST_CASE("pool2d: wide channel blocks and tails, max and average", "[kernels][pool]") {
    std::mt19937 rng(31);
    std::uniform_real_distribution<float> d(-3.f, -0.5f);  // negative: padding must never win a max
    struct G {
        i64 h, w, kh, kw, s, pt, pl, oh, ow;
    };
    // 2x2/2 valid; 3x3/2 'same' (oh = ceil(h/2)); 3x3/1 'same'
    graft_test::IsaGuard guard;
    ThreadPool two(2);
    for (auto isa : graft_test::isas())
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &two})
            for (G g : {G{28, 28, 2, 2, 2, 0, 0, 14, 14}, G{9, 7, 3, 3, 2, 1, 1, 5, 4}, G{5, 6, 3, 3, 1, 1, 1, 5, 6}})
                for (i64 c : {3, 8, 12, 16, 24, 32, 33, 64, 100}) {
                    graft::cpu::gemm::set_isa(isa);
                    PoolParams p{};
                    p.d = p.kd = p.stride_d = p.od = 1;
                    p.n = 2, p.h = g.h, p.w = g.w, p.c = c, p.kh = g.kh, p.kw = g.kw;
                    p.stride_h = p.stride_w = g.s, p.pad_top = g.pt, p.pad_left = g.pl, p.oh = g.oh, p.ow = g.ow;
                    std::vector<float> x(static_cast<std::size_t>(p.n * p.h * p.w * c));
                    for (auto& v : x) v = d(rng);
                    for (bool max : {true, false}) {
                        std::vector<float> y(static_cast<std::size_t>(p.n * p.oh * p.ow * c) + 1, 5.f);
                        pool2d_nhwc(x.data(), y.data(), p, max, pool);
                        double worst = 0;
                        for (i64 n = 0; n < p.n; ++n)
                            for (i64 oy = 0; oy < p.oh; ++oy)
                                for (i64 ox = 0; ox < p.ow; ++ox)
                                    for (i64 ch = 0; ch < c; ++ch) {
                                        double acc = max ? -1e300 : 0;
                                        int cnt = 0;
                                        for (i64 ky = 0; ky < p.kh; ++ky)
                                            for (i64 kx = 0; kx < p.kw; ++kx) {
                                                const i64 iy = oy * p.stride_h - p.pad_top + ky,
                                                          ix = ox * p.stride_w - p.pad_left + kx;
                                                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                                                const double v = x[((n * p.h + iy) * p.w + ix) * c + ch];
                                                acc = max ? std::max(acc, v) : acc + v;
                                                ++cnt;
                                            }
                                        if (!max) acc /= cnt;
                                        worst =
                                            std::max(worst, std::fabs(y[((n * p.oh + oy) * p.ow + ox) * c + ch] - acc));
                                    }
                        INFO(graft::cpu::gemm::isa_name(isa) << (pool ? " 2 threads" : "") << ": h " << g.h << " k "
                                                             << g.kh << " c " << c << " max " << max);
                        CHECK(worst <= 1e-6);
                        CHECK(y.back() == 5.f);
                    }
                }
}

TEST_CASE("pool2d: a NaN in a max window stays when it comes first, and is passed over after", "[kernels][pool]") {
    // The comparison graft_rt::pool_ndhwc (and the generated code) makes: acc = v > acc ? v : acc.
    graft_test::IsaGuard guard;
    for (auto isa : graft_test::isas()) {
        graft::cpu::gemm::set_isa(isa);
        PoolParams p{};
        p.d = p.kd = p.stride_d = p.od = 1;
        p.n = 1, p.h = 1, p.w = 2, p.c = 40, p.kh = 1, p.kw = 2, p.stride_h = p.stride_w = 2, p.oh = 1, p.ow = 1;
        std::vector<float> x(80, 1.f), y(40, 0.f);
        const float nan = std::nanf("");
        for (i64 c = 0; c < 40; c += 2) x[static_cast<std::size_t>(c)] = nan;       // first tap NaN: stays
        for (i64 c = 1; c < 40; c += 2) x[static_cast<std::size_t>(40 + c)] = nan;  // second tap NaN: passed over
        pool2d_nhwc(x.data(), y.data(), p, true);
        INFO(graft::cpu::gemm::isa_name(isa));
        for (std::size_t c = 0; c < 40; ++c) {
            INFO("channel " << c);
            if (c % 2 == 0) CHECK(std::isnan(y[c]));
            else CHECK(y[c] == 1.f);
        }
    }
}

}  // namespace graft_test_kernels_pool
