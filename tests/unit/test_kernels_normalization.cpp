// Normalization, PReLU, embedding, masking, batched product and attention kernels (lib/cpu and
// graft_rt's reference kernels) against independent double-precision loops.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cpu/attention.hpp"
#include "cpu/kernels.hpp"
#include "cpu/threadpool.hpp"
#include "graft_rt/attention.hpp"
#include "graft_rt/elementwise.hpp"
#include "graft_rt/embedding.hpp"
#include "graft_rt/normalization.hpp"

namespace graft_test_kernels_normalization {

using namespace graft::cpu;
using graft_rt::AttentionParams;
using Score = graft_rt::AttentionScore;

namespace {

using i64 = std::int64_t;
using dvec = std::vector<double>;
using fvec = std::vector<float>;

std::mt19937& gen() {
    static std::mt19937 g(4242);
    return g;
}
fvec randv(i64 n, float lo = -1.f, float hi = 1.f) {
    std::uniform_real_distribution<float> d(lo, hi);
    fvec v(static_cast<std::size_t>(n));
    for (auto& e : v) e = d(gen());
    return v;
}
void close(const fvec& got, const dvec& ref, double tol = 1e-5) {
    REQUIRE(got.size() == ref.size());
    double worst = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double e = std::fabs(got[i] - ref[i]) / std::max(1.0, std::fabs(ref[i]));
        if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e, at = i;
    }
    INFO("worst relative error " << worst << " at " << at);
    CHECK(worst <= tol);
}

}  // namespace

TEST_CASE("layer_norm: rows with gamma/beta, without, in place", "[kernels][normalization]") {
    for (auto [M, K] : {std::pair<i64, i64>{1, 1}, {3, 7}, {5, 64}, {2, 300}}) {
        auto x = randv(M * K, -3, 5), g = randv(K, 0.5, 1.5), b = randv(K);
        for (int variant = 0; variant < 3; ++variant) {
            const float* gp = variant == 0 ? g.data() : nullptr;
            const float* bp = variant != 2 ? b.data() : nullptr;
            dvec ref(x.size());
            for (i64 m = 0; m < M; ++m) {
                double mean = 0, var = 0;
                for (i64 k = 0; k < K; ++k) mean += x[m * K + k];
                mean /= K;
                for (i64 k = 0; k < K; ++k) var += std::pow(x[m * K + k] - mean, 2);
                var /= K;
                for (i64 k = 0; k < K; ++k)
                    ref[m * K + k] = (x[m * K + k] - mean) / std::sqrt(var + 1e-3) * (gp ? gp[k] : 1.0) + (bp ? bp[k] : 0.0);
            }
            fvec y(x.size());
            graft_rt::layer_norm(x.data(), gp, bp, y.data(), M, K, 1e-3f);
            close(y, ref);
            fvec inplace = x;
            graft_rt::layer_norm(inplace.data(), gp, bp, inplace.data(), M, K, 1e-3f);
            close(inplace, ref);
        }
    }
}

TEST_CASE("group_norm: groups of channels over space", "[kernels][normalization]") {
    for (auto [N, S, C, G] : {std::array<i64, 4>{2, 5, 6, 3}, {1, 1, 4, 4}, {3, 7, 8, 1}, {2, 4, 6, 2}}) {
        auto x = randv(N * S * C, -2, 3), g = randv(C, 0.5, 1.5), b = randv(C);
        dvec ref(x.size());
        const i64 cg = C / G;
        for (i64 n = 0; n < N; ++n)
            for (i64 gr = 0; gr < G; ++gr) {
                double mean = 0, var = 0;
                for (i64 s = 0; s < S; ++s)
                    for (i64 c = gr * cg; c < (gr + 1) * cg; ++c) mean += x[(n * S + s) * C + c];
                mean /= S * cg;
                for (i64 s = 0; s < S; ++s)
                    for (i64 c = gr * cg; c < (gr + 1) * cg; ++c) var += std::pow(x[(n * S + s) * C + c] - mean, 2);
                var /= S * cg;
                for (i64 s = 0; s < S; ++s)
                    for (i64 c = gr * cg; c < (gr + 1) * cg; ++c) {
                        const i64 i = (n * S + s) * C + c;
                        ref[i] = (x[i] - mean) / std::sqrt(var + 1e-3) * g[c] + b[c];
                    }
            }
        fvec y(x.size());
        graft_rt::group_norm(x.data(), g.data(), b.data(), y.data(), N, S, C, G, 1e-3f);
        close(y, ref);
    }
}

TEST_CASE("l2_normalize and prelu", "[kernels][normalization]") {
    const i64 M = 4, K = 9;
    auto x = randv(M * K);
    std::fill(x.begin() + K, x.begin() + 2 * K, 0.f);  // an all-zero row stays zero (epsilon)
    dvec ref(x.size());
    for (i64 m = 0; m < M; ++m) {
        double ss = 0;
        for (i64 k = 0; k < K; ++k) ss += double(x[m * K + k]) * x[m * K + k];
        for (i64 k = 0; k < K; ++k) ref[m * K + k] = x[m * K + k] / std::sqrt(std::max(ss, 1e-12));
    }
    fvec y(x.size());
    graft_rt::l2_normalize(x.data(), y.data(), M, K, 1e-12f);
    close(y, ref);

    auto a = randv(K, -0.5, 0.5);
    for (i64 i = 0; i < M * K; ++i) ref[i] = x[i] < 0 ? a[i % K] * double(x[i]) : x[i];
    graft_rt::prelu(x.data(), a.data(), y.data(), M, K);
    close(y, ref, 1e-6);
}

TEST_CASE("embedding: lookup, truncation, out-of-range and NaN give zeros", "[kernels][embedding]") {
    const i64 V = 5, D = 3;
    auto table = randv(V * D);
    const fvec idx{0.f, 4.f, 2.9f, -0.5f, -1.f, 5.f, 1e30f, -1e30f, NAN, 4.99f, 3.f};
    dvec ref;
    for (float v : idx) {
        // Keras: int32 cast truncates toward zero; we define out-of-range as zeros.
        const bool ok = !std::isnan(v) && std::trunc(double(v)) >= 0 && std::trunc(double(v)) < V;
        for (i64 d = 0; d < D; ++d) ref.push_back(ok ? table[static_cast<std::size_t>(std::trunc(v) * D + d)] : 0.0);
    }
    fvec y(idx.size() * D, 123.f);
    graft_rt::embedding(idx.data(), table.data(), y.data(), static_cast<i64>(idx.size()), V, D);
    close(y, ref, 0);

    fvec m(idx.size());
    graft_rt::nonzero_mask(idx.data(), m.data(), static_cast<i64>(idx.size()));
    for (std::size_t i = 0; i < idx.size(); ++i) CHECK(m[i] == (idx[i] != 0.f ? 1.f : 0.f));
}

TEST_CASE("masking: rows equal to mask_value are zeroed and masked", "[kernels][embedding]") {
    const i64 M = 5, K = 3;
    fvec x = randv(M * K);
    for (i64 k = 0; k < K; ++k) x[1 * K + k] = 0.5f, x[3 * K + k] = 0.5f;
    x[3 * K + 2] = 0.25f;  // row 3 differs in one feature: kept
    fvec y(x.size()), mask(M);
    graft_rt::masking(x.data(), y.data(), mask.data(), M, K, 0.5f);
    for (i64 m = 0; m < M; ++m) {
        CHECK(mask[m] == (m == 1 ? 0.f : 1.f));
        for (i64 k = 0; k < K; ++k) CHECK(y[m * K + k] == (m == 1 ? 0.f : x[m * K + k]));
    }
}

namespace {

dvec matmul_ref(const fvec& x, const fvec& w, i64 B, i64 M, i64 K, i64 N) {
    dvec ref(static_cast<std::size_t>(B * M * N), 0.0);
    for (i64 b = 0; b < B; ++b)
        for (i64 m = 0; m < M; ++m)
            for (i64 n = 0; n < N; ++n)
                for (i64 k = 0; k < K; ++k) ref[(b * M + m) * N + n] += double(x[(b * M + m) * K + k]) * w[(b * K + k) * N + n];
    return ref;
}

}  // namespace

TEST_CASE("batch_matmul against a triple loop", "[kernels][attention]") {
    for (auto [B, M, K, N] : {std::array<i64, 4>{1, 1, 1, 1}, {3, 4, 5, 2}, {2, 1, 7, 1}, {2, 6, 3, 9}}) {
        auto x = randv(B * M * K), w = randv(B * K * N);
        const dvec ref = matmul_ref(x, w, B, M, K, N);
        fvec y(ref.size());
        batch_matmul(x.data(), w.data(), y.data(), B, M, K, N);
        close(y, ref);
    }
}

TEST_CASE("batch_matmul over a pool: whole products per thread, or each one split", "[kernels][attention]") {
    graft::cpu::ThreadPool pool(3);
    // 5 products over 3 threads; 2 products, each split over the 3 threads.
    for (auto [B, M, K, N] : {std::array<i64, 4>{5, 40, 33, 50}, {2, 64, 70, 90}}) {
        auto x = randv(B * M * K), w = randv(B * K * N);
        const dvec ref = matmul_ref(x, w, B, M, K, N);
        fvec y(ref.size());
        batch_matmul(x.data(), w.data(), y.data(), B, M, K, N, &pool);
        close(y, ref);
    }
}

namespace {

dvec attention_ref(const fvec& q, const fvec& k, const fvec& v, const float* a, const float* vmask, const AttentionParams& p) {
    const i64 H = p.heads, DK = p.dk, DV = p.dv;
    dvec y(static_cast<std::size_t>(p.b * p.tq * H * DV), 0.0);
    for (i64 b = 0; b < p.b; ++b)
        for (i64 h = 0; h < H; ++h)
            for (i64 i = 0; i < p.tq; ++i) {
                dvec s(static_cast<std::size_t>(p.tv));
                for (i64 j = 0; j < p.tv; ++j) {
                    double sc = 0;
                    for (i64 d = 0; d < DK; ++d) {
                        const double qd = q[(b * p.tq + i) * H * DK + h * DK + d], kd = k[(b * p.tv + j) * H * DK + h * DK + d];
                        sc += p.score == Score::dot ? qd * kd : (a ? a[d] : 1.0) * std::tanh(p.scale * (qd + kd));
                    }
                    if (p.score == Score::dot) sc *= p.scale;
                    // Keras subtracts 1e9 in float32: a fully masked row becomes uniform
                    if ((p.causal && j > i) || (vmask && vmask[b * p.tv + j] == 0)) sc = double(float(sc) - 1e9f);
                    s[j] = sc;
                }
                const double mx = *std::max_element(s.begin(), s.end());
                double sum = 0;
                for (auto& e : s) sum += (e = std::exp(e - mx));
                for (i64 j = 0; j < p.tv; ++j)
                    for (i64 d = 0; d < DV; ++d)
                        y[(b * p.tq + i) * H * DV + h * DV + d] += s[j] / sum * v[(b * p.tv + j) * H * DV + h * DV + d];
            }
    return y;
}

}  // namespace

TEST_CASE("attention: dot with heads, causal and value mask; tanh scores", "[kernels][attention]") {
    struct Case {
        AttentionParams p;
        bool a, vmask;
    };
    const Case cases[] = {
        {{2, 3, 4, 1, 5, 2, Score::dot, 0.7f, false}, false, false},
        {{2, 4, 4, 3, 2, 3, Score::dot, 0.5f, true}, false, false},
        {{1, 5, 3, 2, 4, 4, Score::dot, 1.f, false}, false, true},
        {{3, 2, 6, 1, 3, 2, Score::tanh, 1.3f, false}, true, false},
        {{2, 3, 3, 1, 4, 1, Score::tanh, 1.f, true}, false, true},
    };
    for (const auto& c : cases) {
        const auto& p = c.p;
        INFO("case b " << p.b << " tq " << p.tq << " tv " << p.tv << " heads " << p.heads);
        auto q = randv(p.b * p.tq * p.heads * p.dk), k = randv(p.b * p.tv * p.heads * p.dk), v = randv(p.b * p.tv * p.heads * p.dv);
        auto a = randv(p.dk);
        fvec vm(static_cast<std::size_t>(p.b * p.tv), 1.f);
        if (c.vmask) vm[1] = 0.f;
        if (c.vmask && p.b > 1) vm[static_cast<std::size_t>(p.tv)] = 0.f;
        const float* ap = c.a ? a.data() : nullptr;
        const float* mp = c.vmask ? vm.data() : nullptr;
        fvec y(static_cast<std::size_t>(p.b * p.tq * p.heads * p.dv)), work(static_cast<std::size_t>(p.tv));
        graft_rt::attention(q.data(), k.data(), v.data(), ap, mp, y.data(), p, work.data());
        close(y, attention_ref(q, k, v, ap, mp, p));
    }
}

/// An attention_dot case: the sizes, and whether a mask drops some of the keys.
struct DotCase {
    AttentionParams p;
    bool vmask;
};

TEST_CASE("attention_dot: the GEMM path against the loops, on a pool", "[kernels][attention]") {
    graft::cpu::ThreadPool pool(3);
    const DotCase cases[] = {
        {{2, 3, 4, 1, 5, 2, Score::dot, 0.7f, false}, false},
        {{2, 4, 4, 3, 2, 3, Score::dot, 0.5f, true}, false},
        {{1, 5, 3, 2, 4, 4, Score::dot, 1.f, false}, true},
        {{2, 37, 53, 4, 16, 24, Score::dot, 0.125f, true}, true},  // full GEMM tiles; 8 pairs over 3 threads
        {{3, 64, 64, 4, 64, 64, Score::dot, 0.125f, false}, true},
        {{1, 300, 280, 2, 8, 5, Score::dot, 0.3f, true}, true},  // queries in blocks of 256, causal across them
    };
    for (const auto& c : cases)
        for (int max_tasks : {1, 3}) {
            const auto& p = c.p;
            INFO("b " << p.b << " tq " << p.tq << " tv " << p.tv << " heads " << p.heads << " dk " << p.dk << " dv " << p.dv
                      << " causal " << p.causal << " vmask " << c.vmask << " tasks " << max_tasks);
            auto q = randv(p.b * p.tq * p.heads * p.dk), k = randv(p.b * p.tv * p.heads * p.dk);
            auto v = randv(p.b * p.tv * p.heads * p.dv);
            fvec vm(static_cast<std::size_t>(p.b * p.tv), 1.f);
            vm[1] = 0.f;
            if (p.b > 1) vm[static_cast<std::size_t>(p.tv) + 2] = 0.f;
            const float* mp = c.vmask ? vm.data() : nullptr;
            fvec y(static_cast<std::size_t>(p.b * p.tq * p.heads * p.dv), -5.f);
            fvec work(static_cast<std::size_t>(max_tasks * graft::cpu::attention_dot_floats(p)));
            graft::cpu::attention_dot(q.data(), k.data(), v.data(), mp, y.data(), p, work.data(), max_tasks, &pool);
            close(y, attention_ref(q, k, v, nullptr, mp, p));
        }
    // No keys: every output is 0, as graft_rt::attention leaves it.
    const AttentionParams none{2, 3, 0, 2, 4, 5, Score::dot, 1.f, false};
    auto q = randv(2 * 3 * 2 * 4);
    fvec y(2 * 3 * 2 * 5, -5.f), work(static_cast<std::size_t>(graft::cpu::attention_dot_floats(none)) + 1);
    graft::cpu::attention_dot(q.data(), q.data(), q.data(), nullptr, y.data(), none, work.data(), 1, &pool);  // k, v unread
    for (float e : y) CHECK(e == 0.f);
}

TEST_CASE("attention: packed q, k and v (PyTorch's in_proj) read in place, loops and GEMM path", "[kernels][attention]") {
    graft::cpu::ThreadPool pool(3);
    const DotCase cases[] = {
        {{2, 5, 5, 2, 4, 4, Score::dot, 0.5f, false}, false},
        {{2, 37, 37, 3, 8, 8, Score::dot, 0.3f, true}, true},  // keys past a panel of 16, causal, masked
        {{3, 64, 64, 4, 16, 16, Score::dot, 0.25f, false}, false},
    };
    for (const auto& c : cases) {
        AttentionParams p = c.p;
        INFO("b " << p.b << " t " << p.tq << " heads " << p.heads << " d " << p.dk << " causal " << p.causal);
        const i64 D = p.heads * p.dk, rows = p.b * p.tq;
        const auto qkv = randv(rows * 3 * D);
        fvec q, k, v;  // the three thirds of each row, apart, for the reference
        for (i64 r = 0; r < rows; ++r)
            for (fvec* part : {&q, &k, &v}) {
                const auto third = static_cast<i64>(part == &q ? 0 : part == &k ? 1 : 2);
                part->insert(part->end(), qkv.begin() + r * 3 * D + third * D, qkv.begin() + r * 3 * D + (third + 1) * D);
            }
        fvec vm(static_cast<std::size_t>(p.b * p.tv), 1.f);
        vm[2] = 0.f;
        const float* mp = c.vmask ? vm.data() : nullptr;
        const dvec want = attention_ref(q, k, v, nullptr, mp, p);
        p.packed = true;
        fvec y(static_cast<std::size_t>(rows * D), -5.f), work(static_cast<std::size_t>(p.tv));
        graft_rt::attention(qkv.data(), qkv.data(), qkv.data(), nullptr, mp, y.data(), p, work.data());
        close(y, want);
        for (int max_tasks : {1, 3}) {
            fvec yd(y.size(), -5.f), wd(static_cast<std::size_t>(max_tasks * graft::cpu::attention_dot_floats(p)));
            graft::cpu::attention_dot(qkv.data(), qkv.data(), qkv.data(), mp, yd.data(), p, wd.data(), max_tasks, &pool);
            close(yd, want);
        }
    }
}

}  // namespace graft_test_kernels_normalization
