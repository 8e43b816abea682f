// The single-row products (gemv.cpp): the column-block layout (gemv_pack + gemv) and the panel
// layout (gemv_packed, what gemm() runs for M == 1) on every supported instruction set, with
// every epilogue, ragged widths across block boundaries, B larger than the L2 and
// the thread pool, against double-precision loops.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/gemv.hpp"
#include "cpu/threadpool.hpp"

#include "isa_support.hpp"

namespace graft_test_gemv {

using namespace gemm_test;

namespace {

enum class Layout { blocks, panels, via_gemm };

struct Case {
    i64 N, K;
    bool bias, accumulate, residual;
    kern::Act act;
};

void check(const Case& c, Layout layout, std::mt19937& rng, graft::cpu::ThreadPool* pool) {
    const i64 ldw = c.N + 3;
    const auto w = rand_vec(rng, c.K * ldw), a = rand_vec(rng, c.K), bias = rand_vec(rng, c.N), res = rand_vec(rng, c.N);
    auto y = rand_vec(rng, c.N + 1);  // y[N] is a guard
    const auto y0 = y;
    kern::ActParams act{c.act};
    gg::Epilogue e;
    e.bias = c.bias ? bias.data() : nullptr;
    e.accumulate = c.accumulate;
    e.residual = c.residual ? res.data() : nullptr;
    e.act = &act;
    std::vector<float> packed;
    if (layout == Layout::blocks) {
        packed = gg::gemv_pack(w.data(), ldw, c.K, c.N);
        REQUIRE(packed.size() == gg::gemv_packed_size(c.K, c.N));
        gg::gemv(c.N, c.K, a.data(), packed.data(), y.data(), e, pool);
    } else {
        packed = gg::pack_b(w.data(), ldw, c.K, c.N);
        if (layout == Layout::panels) {
            gg::gemv_packed(c.N, c.K, a.data(), packed.data(), y.data(), e, pool);
        } else {
            gg::BMatrix b;
            b.data = packed.data();
            b.packed = true;
            gg::gemm(1, c.N, c.K, a.data(), c.K, b, y.data(), c.N, e, pool);
        }
    }
    double worst = 0;
    for (i64 n = 0; n < c.N; ++n) {
        double s = c.accumulate ? y0[n] : c.bias ? bias[n] : 0.0, mag = std::fabs(s);
        for (i64 k = 0; k < c.K; ++k) {
            s += static_cast<double>(a[k]) * w[k * ldw + n];
            mag += std::fabs(static_cast<double>(a[k]) * w[k * ldw + n]);
        }
        if (c.residual) s += res[n], mag += std::fabs(res[n]);
        s = act_ref(s, {c.act});
        worst = std::max(worst, std::fabs(y[n] - s) / (1e-6 + 1e-5 * mag));
    }
    INFO("layout " << int(layout) << " N=" << c.N << " K=" << c.K << " bias=" << c.bias << " acc=" << c.accumulate
                   << " res=" << c.residual << " act=" << int(c.act));
    CHECK(worst <= 1.0);
    CHECK(y[c.N] == y0[c.N]);
}

}  // namespace

TEST_CASE("gemv: both layouts match a double reference on every ISA", "[gemm]") {
    IsaGuard guard;
    std::mt19937 rng(3);
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        for (Layout layout : {Layout::blocks, Layout::panels})
            for (i64 N : {1, 10, 16, 17, 100, 127, 128, 129, 255, 256, 257, 300, 512, 600})
                for (i64 K : {1, 3, 64, 129}) {
                    const bool odd = (N + K) % 2 == 1;
                    check({N, K, odd, false, !odd, kern::Act::linear}, layout, rng, nullptr);
                    check({N, K, false, true, odd, kern::Act::relu}, layout, rng, nullptr);
                }
        for (Layout layout : {Layout::blocks, Layout::panels}) {
            check({45, 70, true, false, true, kern::Act::tanh}, layout, rng, nullptr);  // non-fused activation
            check({33, 0, true, false, true, kern::Act::relu}, layout, rng, nullptr);   // K = 0: epilogue only
            check({20, 0, false, true, false, kern::Act::linear}, layout, rng, nullptr);
        }
    }
}

TEST_CASE("gemv: large B (beyond the L2) and the thread pool", "[gemm]") {
    IsaGuard guard;
    std::mt19937 rng(4);
    graft::cpu::ThreadPool two(2), three(3);
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        for (Layout layout : {Layout::blocks, Layout::panels, Layout::via_gemm}) {
            check({300, 1100, true, false, true, kern::Act::relu}, layout, rng, nullptr);  // 1.3 MB
            check({300, 1100, true, false, false, kern::Act::linear}, layout, rng, &two);
            check({530, 200, false, true, true, kern::Act::tanh}, layout, rng, &three);
            check({128, 2100, true, false, false, kern::Act::relu}, layout, rng, &two);
            check({40, 100, true, false, false, kern::Act::linear}, layout, rng, &two);  // small: one thread
            // One column block, several threads: the blocks layout splits k (partial sums).
            check({200, 300, false, true, true, kern::Act::tanh}, layout, rng, &three);
            check({250, 401, true, false, true, kern::Act::relu}, layout, rng, &two);
            check({1000, 90, true, false, false, kern::Act::relu}, layout, rng, &three);
        }
    }
}

}  // namespace graft_test_gemv
