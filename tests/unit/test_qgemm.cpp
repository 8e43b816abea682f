// The int8 products (qgemm.cpp) on every supported instruction set, two ways:
//  - against the quantisation scheme written out here independently (weights per column,
//    symmetric; rows per row, symmetric, or on AVX-512 VNNI's quads asymmetric over 0..255;
//    round to nearest), summed in double: what the kernels must compute, to float rounding,
//    whatever the tile, panel count, epilogue or thread split;
//  - against the exact float product, within the error bound the scheme guarantees:
//    |a.w - qa.qw sa sw| <= sum_k (|a_k| sw / 2 + |w_k| sa / 2 + sa sw / 4) (asymmetric rows:
//    |w_k| sa + sa sw / 2, as the top of the range may saturate by one level).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/qgemm.hpp"
#include "cpu/threadpool.hpp"

#include "isa_support.hpp"
#include "quant_ref.hpp"

namespace graft_test_qgemm {

using namespace gemm_test;
using quant_ref::Quantised;
using quant_ref::quantise;
using quant_ref::quantise_asym;

namespace {

struct Shape {
    i64 M, N, K;
    bool bias, accumulate, residual;
    kern::Act act;
};

/// Whether `view` runs with asymmetric rows on the active ISA (quads under AVX-512 VNNI).
bool asymmetric(const gg::QMatrix& view) { return view.csum && gg::active_isa() == gg::Isa::avx512; }

/// `run_on`: the ISA to run on when it differs from the one the weights are packed under (an
/// AVX-512 VNNI CPU packs quads of k, the others pairs; each kernel set runs either layout).
void check(const Shape& s, std::mt19937& rng, graft::cpu::ThreadPool* pool, const gg::Isa* run_on = nullptr) {
    const i64 lda = s.K + 2, ldw = s.N + 3, ldc = s.N + 1;
    const auto a = rand_vec(rng, s.M * lda, -2.f, 2.f), w = rand_vec(rng, s.K * ldw, -0.5f, 0.5f);
    const auto bias = rand_vec(rng, s.N), res = rand_vec(rng, s.M * s.N);
    auto c = rand_vec(rng, s.M * ldc + 1);  // c[M * ldc] is a guard
    const auto c0 = c;
    kern::ActParams act{s.act};
    gg::Epilogue e;
    e.bias = s.bias ? bias.data() : nullptr;
    e.accumulate = s.accumulate;
    e.residual = s.residual ? res.data() : nullptr;
    e.ldr = s.N;
    e.act = &act;
    const auto block = gg::qpack(w.data(), ldw, s.K, s.N);
    REQUIRE(block.size() == gg::qpacked_floats(s.K, s.N));
    if (run_on) REQUIRE(gg::set_isa(*run_on));
    std::vector<float> work(gg::qgemm_work_floats(s.M, s.K));
    const gg::QMatrix view = gg::qview(block.data(), s.K, s.N);
    const bool asym = asymmetric(view);
    gg::qgemm(s.M, s.N, s.K, a.data(), lda, view, c.data(), ldc, e, work.data(), pool);

    std::vector<Quantised> cols(static_cast<std::size_t>(s.N));
    for (i64 n = 0; n < s.N; ++n) {
        std::vector<float> col(static_cast<std::size_t>(s.K));
        for (i64 k = 0; k < s.K; ++k) col[k] = w[k * ldw + n];
        cols[n] = quantise(col);
    }
    double worst_scheme = 0, worst_bound = 0;
    for (i64 m = 0; m < s.M; ++m) {
        const std::vector<float> row(a.begin() + m * lda, a.begin() + m * lda + s.K);
        const Quantised qa = asym ? quantise_asym(row) : quantise(row);
        for (i64 n = 0; n < s.N; ++n) {
            const Quantised& qw = cols[n];
            double sum = 0, exact = 0, bound = 0;
            for (i64 k = 0; k < s.K; ++k) {
                sum += static_cast<double>(qa.q[k]) * qw.q[k];
                exact += static_cast<double>(row[k]) * w[k * ldw + n];
                bound += std::fabs(row[k]) * qw.scale / 2 + std::fabs(w[k * ldw + n]) * qa.scale * (asym ? 1.0 : 0.5) +
                         qa.scale * qw.scale * (asym ? 0.5 : 0.25);
            }
            double base = s.accumulate ? c0[m * ldc + n] : s.bias ? bias[n] : 0.0;
            if (s.residual) base += res[m * s.N + n];
            const double want = act_ref(base + sum * qa.scale * qw.scale, {s.act});
            const double got = c[m * ldc + n];
            const double mag = std::fabs(base) + std::fabs(sum) * qa.scale * qw.scale;
            worst_scheme = std::max(worst_scheme, std::fabs(got - want) / (1e-6 + 1e-5 * mag));
            // Against the float product: linear epilogues only (an activation's slope may exceed 1).
            if (s.act == kern::Act::linear || s.act == kern::Act::relu)
                worst_bound = std::max(worst_bound, std::fabs(got - act_ref(base + exact, {s.act})) / (1e-5 * (1 + mag) + bound));
        }
    }
    INFO("M=" << s.M << " N=" << s.N << " K=" << s.K << " asymmetric rows=" << asym << " bias=" << s.bias << " acc=" << s.accumulate
              << " res=" << s.residual << " act=" << int(s.act));
    CHECK(worst_scheme <= 1.0);
    CHECK(worst_bound <= 1.0);
    CHECK(c[s.M * ldc] == c0[s.M * ldc]);
    for (i64 m = 0; m < s.M; ++m) CHECK(c[m * ldc + s.N] == c0[m * ldc + s.N]);  // the column past N
}

}  // namespace

TEST_CASE("qgemm: every ISA computes the quantised product, within the scheme's bound of the float one", "[gemm]") {
    IsaGuard guard;
    std::mt19937 rng(11);
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        for (i64 M : {1, 2, 6, 7, 13})
            for (i64 N : {1, 15, 16, 17, 64, 70})
                for (i64 K : {1, 2, 3, 31, 256}) {
                    const bool odd = (M + N + K) % 2 == 1;
                    check({M, N, K, odd, false, !odd, kern::Act::linear}, rng, nullptr);
                    check({M, N, K, !odd, odd, odd, kern::Act::relu}, rng, nullptr);
                }
        check({5, 40, 90, true, false, true, kern::Act::tanh}, rng, nullptr);  // an activation after the product
        check({3, 20, 0, true, false, true, kern::Act::relu}, rng, nullptr);   // K = 0: the epilogue alone
    }
}

TEST_CASE("qgemm: weights packed under one ISA run on every other (pairs or quads of k)", "[gemm]") {
    IsaGuard guard;
    std::mt19937 rng(13);
    for (gg::Isa pack_isa : isas())
        for (gg::Isa run_isa : isas()) {
            INFO("packed under " << gg::isa_name(pack_isa) << ", run on " << gg::isa_name(run_isa));
            REQUIRE(gg::set_isa(pack_isa));
            check({6, 40, 37, true, false, true, kern::Act::linear}, rng, nullptr, &run_isa);
            REQUIRE(gg::set_isa(pack_isa));
            check({1, 70, 130, false, true, false, kern::Act::relu}, rng, nullptr, &run_isa);
        }
}

TEST_CASE("qgemm: large B (prefetched) and the thread pool split columns or rows", "[gemm]") {
    IsaGuard guard;
    std::mt19937 rng(12);
    graft::cpu::ThreadPool two(2), three(3);
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        check({1, 1000, 1100, true, false, false, kern::Act::relu}, rng, nullptr);  // 1.1 MB of int8: prefetched
        check({1, 530, 300, true, false, true, kern::Act::linear}, rng, &two);      // one row, groups of 4 panels
        check({32, 300, 200, false, true, false, kern::Act::relu}, rng, &three);    // columns
        check({100, 20, 64, true, false, true, kern::Act::linear}, rng, &two);      // rows: two panels only
    }
}

TEST_CASE("qgemm: a row of zeros gives the bias, a NaN or an infinity in a row or a weight gives NaN", "[gemm]") {
    const i64 M = 3, N = 20, K = 9;
    std::vector<float> a(M * K, 0.5f), w(K * N, 0.25f), bias(N, 1.5f), c(M * N, 0.f);
    for (i64 k = 0; k < K; ++k) a[0 * K + k] = 0.f;         // row 0: zeros
    a[2 * K + 4] = std::numeric_limits<float>::quiet_NaN();  // row 2: a NaN
    w[3 * N + 7] = std::numeric_limits<float>::infinity();   // column 7: an infinite weight
    w[5 * N + 11] = std::numeric_limits<float>::quiet_NaN();  // column 11: a NaN weight
    for (i64 k = 0; k < K; ++k) w[k * N + 13] = 1e-35f;      // column 13: too small to quantise
    const auto block = gg::qpack(w.data(), N, K, N);
    std::vector<float> work(gg::qgemm_work_floats(M, K));
    gg::Epilogue e;
    e.bias = bias.data();
    gg::qgemm(M, N, K, a.data(), K, gg::qview(block.data(), K, N), c.data(), N, e, work.data());
    for (i64 n = 0; n < N; ++n) {
        INFO("column " << n);
        if (n == 7 || n == 11) {
            CHECK(std::isnan(c[0 * N + n]));
            CHECK(std::isnan(c[1 * N + n]));
        } else if (n == 13) {
            CHECK(c[0 * N + n] == 1.5f);
            CHECK(c[1 * N + n] == 1.5f);  // 9 x 0.5 x 1e-35 is lost against the bias in float too
        } else {
            CHECK(c[0 * N + n] == 1.5f);
            CHECK(c[1 * N + n] == Approx(1.5 + 9 * 0.125).epsilon(1e-6));  // 0.5 and 0.25 quantise exactly
        }
        CHECK(std::isnan(c[2 * N + n]));
    }
}

}  // namespace graft_test_qgemm
