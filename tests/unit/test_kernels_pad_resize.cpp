// graft_rt's pad_nd (padding and cropping) and resize (nearest by integer factors, the Keras
// bilinear cases) against direct loops; conformance examples cover the rest of resize. The native
// transpose and pad_nd split over a thread pool (cpu/shape.cpp), against direct loops too.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cpu/kernels.hpp"
#include "cpu/threadpool.hpp"
#include "graft_rt/resize.hpp"
#include "graft_rt/shape.hpp"

namespace graft_test_kernels_pad_resize {

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

/// graft_rt::resize of x [in] to [out] by integer factors along every axis (1: not resized).
std::vector<float> resize_by(const std::vector<float>& x, const std::vector<i64>& in, const std::vector<i64>& out,
                             const graft_rt::ResizeParams& p) {
    std::vector<graft_rt::ResizeAxis> ax;
    i64 n = 1;
    for (std::size_t i = 0; i < in.size(); ++i) {
        const bool r = out[i] != in[i];
        ax.push_back({in[i], out[i], r, r ? static_cast<float>(out[i] / in[i]) : 0.f, -1, 0.f, 1.f});
        n *= out[i];
    }
    const int rank = static_cast<int>(in.size());
    std::vector<float> y(static_cast<std::size_t>(n), 123.f), work(static_cast<std::size_t>(graft_rt::resize_work_floats(p, ax.data(), rank) + 1));
    graft_rt::resize(x.data(), y.data(), ax.data(), rank, p, nullptr, work.data());
    return y;
}

constexpr graft_rt::ResizeParams kNearest{graft_rt::ResizeMode::nearest, graft_rt::ResizeCoord::asymmetric, graft_rt::ResizeRound::floor,
                                          -0.75f, false, 0.f};
graft_rt::ResizeParams bilinear(bool half_pixel) {
    return {graft_rt::ResizeMode::linear, half_pixel ? graft_rt::ResizeCoord::half_pixel : graft_rt::ResizeCoord::asymmetric,
            graft_rt::ResizeRound::floor, -0.75f, false, 0.f};
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

TEST_CASE("kernels: NCHW images of 3 channels to NHWC, whole and split over a pool", "[kernels][transpose]") {
    // The AVX-512 path moves 16 pixels at a time: sizes around it, and pools splitting an image.
    graft::cpu::ThreadPool pool(2);
    const std::vector<std::vector<i64>> shapes{{1, 3, 224, 224}, {2, 3, 37, 29}, {3, 3, 1, 15}, {1, 3, 4, 4}, {5, 3, 181, 97}};
    const int perm[4] = {0, 2, 3, 1};
    for (const auto& in : shapes) {
        const i64 n = in[0] * in[1] * in[2] * in[3], hw = in[2] * in[3];
        const auto x = rnd(n);
        for (graft::cpu::ThreadPool* p : {static_cast<graft::cpu::ThreadPool*>(nullptr), &pool}) {
            std::vector<float> y(static_cast<std::size_t>(n) + 1, 123.f);
            graft::cpu::transpose(x.data(), y.data(), in.data(), perm, 4, p);
            int bad = 0;
            for (i64 img = 0; img < in[0]; ++img)
                for (i64 px = 0; px < hw; ++px)
                    for (i64 c = 0; c < 3; ++c)
                        bad += y[static_cast<std::size_t>((img * hw + px) * 3 + c)] !=
                               x[static_cast<std::size_t>((img * 3 + c) * hw + px)];
            INFO("shape " << in[0] << "x3x" << in[2] << "x" << in[3] << (p ? " on 2 threads" : ""));
            CHECK(bad == 0);
            CHECK(y.back() == 123.f);
        }
    }
}

TEST_CASE("kernels: transpose and pad_nd split over a pool match direct loops", "[kernels][pad][transpose]") {
    graft::cpu::ThreadPool pool(2);
    // Large enough to split (the split needs 2 x 32768 output floats), leading size-1 axes included.
    const std::vector<std::vector<i64>> shapes{{64, 32, 48}, {1, 1, 96, 40, 24}, {2, 3, 128, 100}, {1, 70000}, {300, 1, 230}};
    for (const auto& in : shapes) {
        const int rank = static_cast<int>(in.size());
        i64 n = 1;
        for (i64 d : in) n *= d;
        const auto x = rnd(n);
        std::vector<int> perm(static_cast<std::size_t>(rank));
        for (int i = 0; i < rank; ++i) perm[static_cast<std::size_t>(i)] = i;
        for (int trial = 0; trial < 4; ++trial) {
            std::shuffle(perm.begin(), perm.end(), gen());
            std::vector<i64> out(in.size());
            for (int i = 0; i < rank; ++i) out[static_cast<std::size_t>(i)] = in[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])];
            for (graft::cpu::ThreadPool* p : {static_cast<graft::cpu::ThreadPool*>(nullptr), &pool}) {
                std::vector<float> y(static_cast<std::size_t>(n) + 1, 123.f);
                graft::cpu::transpose(x.data(), y.data(), in.data(), perm.data(), rank, p);
                int bad = 0;
                for (i64 f = 0; f < n; ++f) {
                    const auto c = coords(f, out);
                    std::vector<i64> src(in.size());
                    for (int i = 0; i < rank; ++i) src[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])] = c[static_cast<std::size_t>(i)];
                    bad += y[static_cast<std::size_t>(f)] != x[static_cast<std::size_t>(flat_of(src, in))];
                }
                INFO("transpose of rank " << rank << (p ? " on 2 threads" : ""));
                CHECK(bad == 0);
                CHECK(y.back() == 123.f);
            }
        }
        for (int mode : {graft_rt::pad_constant, graft_rt::pad_edge, graft_rt::pad_reflect})
            for (int trial = 0; trial < 3; ++trial) {
                std::vector<i64> out(in.size()), begin(in.size());
                for (std::size_t i = 0; i < in.size(); ++i) {
                    begin[i] = in[i] > 2 ? ri(-2, 2) : ri(0, 1);
                    out[i] = std::max<i64>(1, in[i] + begin[i] + (in[i] > 2 ? ri(-2, 2) : ri(0, 1)));
                }
                i64 nout = 1;
                for (i64 d : out) nout *= d;
                for (graft::cpu::ThreadPool* p : {static_cast<graft::cpu::ThreadPool*>(nullptr), &pool}) {
                    std::vector<float> y(static_cast<std::size_t>(nout) + 1, 123.f);
                    graft::cpu::pad_nd(x.data(), y.data(), in.data(), out.data(), begin.data(), rank, mode, 0.5f, p);
                    int bad = 0;
                    for (i64 f = 0; f < nout; ++f) {
                        auto c = coords(f, out);
                        bool inside = true;
                        for (std::size_t i = 0; i < in.size(); ++i) {
                            i64 s = c[i] - begin[i];
                            if (s < 0 || s >= in[i]) {
                                inside = false;
                                if (mode == graft_rt::pad_edge || in[i] == 1) s = s < 0 ? 0 : in[i] - 1;
                                else if (mode == graft_rt::pad_reflect)  // numpy 'reflect': about the edge entries
                                    while (s < 0 || s >= in[i]) s = s < 0 ? -s : 2 * (in[i] - 1) - s;
                            }
                            c[i] = s;
                        }
                        const float want = inside || mode != graft_rt::pad_constant ? x[static_cast<std::size_t>(flat_of(c, in))] : 0.5f;
                        bad += y[static_cast<std::size_t>(f)] != want;
                    }
                    INFO("pad mode " << mode << " of rank " << rank << (p ? " on 2 threads" : ""));
                    CHECK(bad == 0);
                    CHECK(y.back() == 123.f);
                }
            }
    }
}

TEST_CASE("kernels: nearest resize by integer factors repeats entries along every axis", "[kernels][upsample]") {
    for (int trial = 0; trial < 30; ++trial) {
        const int rank = ri(1, 5);
        std::vector<i64> in(rank), f(rank), out(rank);
        i64 nin = 1, nout = 1;
        for (int i = 0; i < rank; ++i) {
            in[i] = ri(1, 4), f[i] = ri(1, 3), out[i] = in[i] * f[i];
            nin *= in[i], nout *= out[i];
        }
        auto x = rnd(nin);
        const auto y = resize_by(x, in, out, kNearest);
        int bad = 0;
        for (i64 j = 0; j < nout; ++j) {
            auto c = coords(j, out);
            for (int i = 0; i < rank; ++i) c[i] /= f[i];
            bad += y[static_cast<std::size_t>(j)] != x[static_cast<std::size_t>(flat_of(c, in))];
        }
        CHECK(bad == 0);
    }
}

TEST_CASE("kernels: bilinear resize of NHWC, TF 1 legacy and TF 2 half-pixel sampling", "[kernels][resize]") {
    // Known values: a 1x2 row [0, 1] upsampled x2 along W.
    //   legacy: src = j/2 -> 0, 0.5, 1, 1(clamped)      half-pixel: src = (j+0.5)/2 - 0.5 -> -0.25(0), 0.25, 0.75, 1.25(1)
    const std::vector<float> row{0.f, 1.f};
    CHECK(resize_by(row, {1, 1, 2, 1}, {1, 1, 4, 1}, bilinear(false)) == std::vector<float>{0.f, 0.5f, 1.f, 1.f});
    CHECK(resize_by(row, {1, 1, 2, 1}, {1, 1, 4, 1}, bilinear(true)) == std::vector<float>{0.f, 0.25f, 0.75f, 1.f});

    for (int trial = 0; trial < 20; ++trial) {
        const i64 n = ri(1, 2), h = ri(1, 5), w = ri(1, 5), c = ri(1, 3), oh = h * ri(1, 3), ow = w * ri(1, 4);
        const bool half = trial % 2 == 1;
        auto x = rnd(n * h * w * c);
        const auto y2 = resize_by(x, {n, h, w, c}, {n, oh, ow, c}, bilinear(half));
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

}  // namespace graft_test_kernels_pad_resize
