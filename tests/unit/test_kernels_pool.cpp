// pool2d_nhwc with channel counts that use the 16-wide blocks and the scalar tail (the other
// pooling test covers the geometry with few channels), against a direct double loop.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cpu/kernels.hpp"

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
    for (G g : {G{28, 28, 2, 2, 2, 0, 0, 14, 14}, G{9, 7, 3, 3, 2, 1, 1, 5, 4}, G{5, 6, 3, 3, 1, 1, 1, 5, 6}})
        for (i64 c : {16, 32, 33, 64, 100}) {
            PoolParams p{};
            p.d = p.kd = p.stride_d = p.od = 1;
            p.n = 2, p.h = g.h, p.w = g.w, p.c = c, p.kh = g.kh, p.kw = g.kw;
            p.stride_h = p.stride_w = g.s, p.pad_top = g.pt, p.pad_left = g.pl, p.oh = g.oh, p.ow = g.ow;
            std::vector<float> x(static_cast<std::size_t>(p.n * p.h * p.w * c));
            for (auto& v : x) v = d(rng);
            for (bool max : {true, false}) {
                std::vector<float> y(static_cast<std::size_t>(p.n * p.oh * p.ow * c) + 1, 5.f);
                pool2d_nhwc(x.data(), y.data(), p, max);
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
                                worst = std::max(worst, std::fabs(y[((n * p.oh + oy) * p.ow + ox) * c + ch] - acc));
                            }
                INFO("h " << g.h << " k " << g.kh << " c " << c << " max " << max);
                CHECK(worst <= 1e-6);
                CHECK(y.back() == 5.f);
            }
        }
}

}  // namespace graft_test_kernels_pool
