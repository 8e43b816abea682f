// graft_rt's pad_nd (padding and cropping), upsample_nearest and resize_bilinear_nhwc against
// direct loops.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "graft_rt/resize.hpp"
#include "graft_rt/shape.hpp"

using i64 = std::int64_t;

namespace {

std::mt19937& gen() {
    static std::mt19937 g(777);
    return g;
}
std::vector<float> rnd(i64 n) {
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& e : v) e = d(gen());
    return v;
}
int ri(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen()); }

/// Row-major index -> coordinates.
std::vector<i64> coords(i64 flat, const std::vector<i64>& shape) {
    std::vector<i64> c(shape.size());
    for (std::size_t i = shape.size(); i-- > 0;) c[i] = flat % shape[i], flat /= shape[i];
    return c;
}
i64 flat_of(const std::vector<i64>& c, const std::vector<i64>& shape) {
    i64 f = 0;
    for (std::size_t i = 0; i < shape.size(); ++i) f = f * shape[i] + c[i];
    return f;
}

}  // namespace

TEST_CASE("kernels: pad_nd pads with zeros and crops, any rank", "[kernels][pad]") {
    for (int trial = 0; trial < 40; ++trial) {
        const int rank = ri(1, 5);
        std::vector<i64> in(rank), out(rank), begin(rank);
        for (int i = 0; i < rank; ++i) {
            in[i] = ri(1, 5);
            begin[i] = ri(-2, 2);
            if (begin[i] < 0 && -begin[i] >= in[i]) begin[i] = 0;
            const i64 end = ri(-2, 2);
            out[i] = std::max<i64>(1, in[i] + begin[i] + end);
        }
        i64 nin = 1, nout = 1;
        for (int i = 0; i < rank; ++i) nin *= in[i], nout *= out[i];
        auto x = rnd(nin);
        std::vector<float> y(static_cast<std::size_t>(nout), 123.f);
        graft_rt::pad_nd(x.data(), y.data(), in.data(), out.data(), begin.data(), rank);
        int bad = 0;
        for (i64 f = 0; f < nout; ++f) {
            auto c = coords(f, out);
            bool inside = true;
            for (int i = 0; i < rank; ++i) {
                c[i] -= begin[i];
                inside = inside && c[i] >= 0 && c[i] < in[i];
            }
            const float want = inside ? x[static_cast<std::size_t>(flat_of(c, in))] : 0.f;
            bad += y[static_cast<std::size_t>(f)] != want;
        }
        CHECK(bad == 0);
    }
}

TEST_CASE("kernels: upsample_nearest repeats entries along every axis", "[kernels][upsample]") {
    for (int trial = 0; trial < 30; ++trial) {
        const int rank = ri(1, 5);
        std::vector<i64> in(rank), f(rank), out(rank);
        i64 nin = 1, nout = 1;
        for (int i = 0; i < rank; ++i) {
            in[i] = ri(1, 4), f[i] = ri(1, 3), out[i] = in[i] * f[i];
            nin *= in[i], nout *= out[i];
        }
        auto x = rnd(nin);
        std::vector<float> y(static_cast<std::size_t>(nout), 123.f);
        graft_rt::upsample_nearest(x.data(), y.data(), in.data(), f.data(), rank);
        int bad = 0;
        for (i64 j = 0; j < nout; ++j) {
            auto c = coords(j, out);
            for (int i = 0; i < rank; ++i) c[i] /= f[i];
            bad += y[static_cast<std::size_t>(j)] != x[static_cast<std::size_t>(flat_of(c, in))];
        }
        CHECK(bad == 0);
    }
}

TEST_CASE("kernels: resize_bilinear_nhwc, TF 1 legacy and TF 2 half-pixel sampling", "[kernels][resize]") {
    // Known values: a 1x2 row [0, 1] upsampled x4 along W.
    //   legacy: src = j/2 -> 0, 0.5, 1, 1(clamped)      half-pixel: src = (j+0.5)/2 - 0.5 -> -0.25(0), 0.25, 0.75, 1.25(1)
    const float row[2] = {0.f, 1.f};
    float y[4];
    graft_rt::resize_bilinear_nhwc(row, y, 1, 1, 2, 1, 1, 4, false);
    CHECK(std::vector<float>(y, y + 4) == std::vector<float>{0.f, 0.5f, 1.f, 1.f});
    graft_rt::resize_bilinear_nhwc(row, y, 1, 1, 2, 1, 1, 4, true);
    CHECK(std::vector<float>(y, y + 4) == std::vector<float>{0.f, 0.25f, 0.75f, 1.f});

    for (int trial = 0; trial < 20; ++trial) {
        const i64 n = ri(1, 2), h = ri(1, 5), w = ri(1, 5), c = ri(1, 3), oh = h * ri(1, 3), ow = w * ri(1, 4);
        const bool half = trial % 2 == 1;
        auto x = rnd(n * h * w * c);
        std::vector<float> y2(static_cast<std::size_t>(n * oh * ow * c));
        graft_rt::resize_bilinear_nhwc(x.data(), y2.data(), n, h, w, c, oh, ow, half);
        // reference: separable 1-D linear interpolation weights in double
        auto weights = [&](i64 in, i64 out) {
            std::vector<std::vector<double>> m(static_cast<std::size_t>(out), std::vector<double>(static_cast<std::size_t>(in), 0.0));
            for (i64 o = 0; o < out; ++o) {
                const double s = half ? (o + 0.5) * double(in) / double(out) - 0.5 : o * double(in) / double(out);
                const double cl = std::min(std::max(s, 0.0), double(in - 1));
                const i64 lo = static_cast<i64>(std::floor(cl));
                const i64 hi = std::min(lo + 1, in - 1);
                m[o][lo] += 1 - (cl - lo);
                m[o][hi] += cl - lo;
            }
            return m;
        };
        auto mh = weights(h, oh), mw = weights(w, ow);
        double worst = 0;
        for (i64 b = 0; b < n; ++b)
            for (i64 i = 0; i < oh; ++i)
                for (i64 j = 0; j < ow; ++j)
                    for (i64 k = 0; k < c; ++k) {
                        double s = 0;
                        for (i64 p = 0; p < h; ++p)
                            for (i64 q = 0; q < w; ++q) s += mh[i][p] * mw[j][q] * x[((b * h + p) * w + q) * c + k];
                        worst = std::max(worst, std::fabs(s - y2[((b * oh + i) * ow + j) * c + k]));
                    }
        CHECK(worst <= 1e-5);
    }
}
