// The bf16 products (qgemm.hpp with Precision::bf16, bgemm.cpp) on every kernel this CPU runs
// (the portable one always, AVX-512 BF16 where the CPU has it), two ways:
//  - against the scheme written out here independently (every operand rounded to the nearest
//    bfloat16, ties to even; the products summed in double): what the kernels must compute, to
//    the float rounding of their sums, whatever the tile, panel count, epilogue or thread split;
//  - against the exact float product, within the bound rounding guarantees: each operand moves
//    by at most half an ulp, 2^-8 of itself, so |a.w - bf(a).bf(w)| <= sum_k |a_k w_k| (2^-7 + 2^-16).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/qgemm.hpp"
#include "cpu/threadpool.hpp"

#include "isa_support.hpp"
#include "quant_ref.hpp"

namespace graft_test_bgemm {

using namespace gemm_test;
using graft::Precision;
using quant_ref::bf16;

namespace {

struct Shape {
    i64 M, N, K;
    bool bias, accumulate, residual;
    kern::Act act;
};

void check(const Shape& s, std::mt19937& rng, graft::cpu::ThreadPool* pool) {
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
    const auto block = gg::qpack(w.data(), ldw, s.K, s.N, Precision::bf16);
    REQUIRE(block.size() == gg::qpacked_floats(s.K, s.N, Precision::bf16));
    const auto view = gg::qview(block.data(), s.K, s.N);
    REQUIRE(view.kind == Precision::bf16);
    std::vector<float> work(gg::qgemm_work_floats(s.M, s.K));
    gg::qgemm(s.M, s.N, s.K, a.data(), lda, view, c.data(), ldc, e, work.data(), pool);

    double worst_scheme = 0, worst_bound = 0;
    for (i64 m = 0; m < s.M; ++m)
        for (i64 n = 0; n < s.N; ++n) {
            double sum = 0, exact = 0, mag = 0;
            for (i64 k = 0; k < s.K; ++k) {
                const float x = a[m * lda + k], y = w[k * ldw + n];
                sum += bf16(x) * bf16(y);
                exact += static_cast<double>(x) * y;
                mag += std::fabs(static_cast<double>(x) * y);
            }
            double base = s.accumulate ? c0[m * ldc + n] : s.bias ? bias[n] : 0.0;
            if (s.residual) base += res[m * s.N + n];
            const double got = c[m * ldc + n];
            const double scale = std::fabs(base) + mag;
            // Float sums of K products: within K 2^-24 of their magnitudes (generously, 2K).
            const double float_err = 1e-7 + 2.0 * static_cast<double>(s.K + 2) * std::ldexp(scale, -24);
            worst_scheme = std::max(worst_scheme, std::fabs(got - act_ref(base + sum, {s.act})) / float_err);
            if (s.act == kern::Act::linear || s.act == kern::Act::relu)
                worst_bound =
                    std::max(worst_bound, std::fabs(got - act_ref(base + exact, {s.act})) /
                                              (float_err + mag * (std::ldexp(1.0, -7) + std::ldexp(1.0, -16))));
        }
    INFO("M=" << s.M << " N=" << s.N << " K=" << s.K << " bias=" << s.bias << " acc=" << s.accumulate
              << " res=" << s.residual << " act=" << int(s.act));
    CHECK(worst_scheme <= 1.0);
    CHECK(worst_bound <= 1.0);
    CHECK(c[s.M * ldc] == c0[s.M * ldc]);
    for (i64 m = 0; m < s.M; ++m) CHECK(c[m * ldc + s.N] == c0[m * ldc + s.N]);  // the column past N
}

}  // namespace

TEST_CASE("bgemm: every kernel computes the bf16-rounded product, within rounding's bound of the float one", "[gemm]") {
    IsaGuard guard;
    std::mt19937 rng(21);
    INFO("AVX-512 BF16 on this CPU: " << gg::qgemm_fast(Precision::bf16));
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        for (i64 M : {1, 2, 7, 8, 9, 17})
            for (i64 N : {1, 15, 16, 17, 48, 130})
                for (i64 K : {1, 2, 3, 31, 33, 256}) {
                    const bool odd = (M + N + K) % 2 == 1;
                    check({M, N, K, odd, false, !odd, kern::Act::linear}, rng, nullptr);
                    check({M, N, K, !odd, odd, odd, kern::Act::relu}, rng, nullptr);
                }
        check({5, 40, 90, true, false, true, kern::Act::tanh}, rng, nullptr);  // an activation after the product
        check({3, 20, 0, true, false, true, kern::Act::relu}, rng, nullptr);   // K = 0: the epilogue alone
    }
}

TEST_CASE("bgemm: large B (prefetched) and the thread pool split columns or rows", "[gemm]") {
    IsaGuard guard;
    std::mt19937 rng(22);
    graft::cpu::ThreadPool two(2), three(3);
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        check({1, 700, 900, true, false, false, kern::Act::relu}, rng, nullptr);  // 1.3 MB of bf16: prefetched
        check({1, 530, 300, true, false, true, kern::Act::linear}, rng, &two);    // one row, groups of 8 panels
        check({32, 300, 200, false, true, false, kern::Act::relu}, rng, &three);  // columns
        check({100, 20, 64, true, false, true, kern::Act::linear}, rng, &two);    // rows: two panels only
    }
}

TEST_CASE("bgemm: a row of zeros gives the bias, a NaN in a row or a NaN or infinite weight gives NaN", "[gemm]") {
    IsaGuard guard;
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        const i64 M = 3, N = 20, K = 9;
        std::vector<float> a(M * K, 0.5f), w(K * N, 0.25f), bias(N, 1.5f), c(M * N, 0.f);
        for (i64 k = 0; k < K; ++k) a[0 * K + k] = 0.f;           // row 0: zeros
        a[2 * K + 4] = std::numeric_limits<float>::quiet_NaN();   // row 2: a NaN
        w[3 * N + 7] = std::numeric_limits<float>::infinity();    // column 7: an infinite weight
        w[5 * N + 11] = std::numeric_limits<float>::quiet_NaN();  // column 11: a NaN weight
        const auto block = gg::qpack(w.data(), N, K, N, Precision::bf16);
        std::vector<float> work(gg::qgemm_work_floats(M, K));
        gg::Epilogue e;
        e.bias = bias.data();
        gg::qgemm(M, N, K, a.data(), K, gg::qview(block.data(), K, N), c.data(), N, e, work.data());
        for (i64 n = 0; n < N; ++n) {
            INFO("column " << n);
            if (n == 11) CHECK(std::isnan(c[0 * N + n]));  // 0 x NaN
            if (n == 7 || n == 11) {
                CHECK(!std::isfinite(c[1 * N + n]));
            } else {
                CHECK(c[0 * N + n] == 1.5f);
                CHECK(c[1 * N + n] == 1.5f + 9 * 0.125f);  // 0.5 and 0.25 are exact in bf16
            }
            CHECK(std::isnan(c[2 * N + n]));
        }
    }
}

TEST_CASE("bgemm: qview refuses a block packed for other sizes", "[gemm]") {
    std::vector<float> w(6 * 5, 1.f);
    const auto block = gg::qpack(w.data(), 5, 6, 5, Precision::bf16);
    CHECK(gg::qview(block.data(), 6, 5).kind == Precision::bf16);
    CHECK_THROWS_AS(gg::qview(block.data(), 5, 6), std::logic_error);
    const auto q = gg::qpack(w.data(), 5, 6, 5, Precision::int8);
    CHECK(gg::qview(q.data(), 6, 5).kind == Precision::int8);
    CHECK_THROWS_AS(gg::qpack(w.data(), 5, 6, 5, Precision::fp32), std::logic_error);
}

}  // namespace graft_test_bgemm
