// The run-time dispatched GEMM (every micro-kernel ISA this CPU supports) and the implicit-GEMM
// convolution, against independent double-precision loops.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cpu/gemm/gemm.hpp"
#include "cpu/threadpool.hpp"

#include "isa_support.hpp"

namespace graft_test_gemm {

using namespace gemm_test;

namespace {

struct Case {
    i64 M, N, K;
    bool packed, bias, accumulate, residual;
    kern::Act act;
};

/// With k1 >= 0, A goes in as two parts (gemm::SplitA): columns [0, k1) and [k1, K) copied into
/// matrices of their own row strides, the reference reading the whole A.
void check_gemm(const Case& c, std::mt19937& rng, graft::cpu::ThreadPool* pool, i64 k1 = -1) {
    const i64 lda = c.K + 3, ldb = c.N + 5, ldc = c.N + 2, ldr = c.N + 1;
    auto A = rand_vec(rng, c.M * lda);
    auto B = rand_vec(rng, c.K * ldb);
    auto bias = rand_vec(rng, c.N);
    auto R = rand_vec(rng, c.M * ldr);
    auto C = rand_vec(rng, c.M * ldc);
    const auto C0 = C;
    std::vector<float> packed;
    gg::BMatrix bm;
    if (c.packed) {
        packed = gg::pack_b(B.data(), ldb, c.K, c.N);
        REQUIRE(packed.size() == gg::packed_size(c.K, c.N));
        bm.data = packed.data();
        bm.packed = true;
    } else {
        bm.data = B.data();
        bm.ld = ldb;
    }
    kern::ActParams act{c.act};
    if (c.act == kern::Act::clip) act.alpha = -0.3f, act.max_value = 0.4f;  // ReLU6's form, bounds inside the range
    gg::Epilogue e;
    e.bias = c.bias ? bias.data() : nullptr;
    e.accumulate = c.accumulate;
    e.residual = c.residual ? R.data() : nullptr;
    e.ldr = ldr;
    e.act = &act;
    if (k1 < 0) {
        gg::gemm(c.M, c.N, c.K, A.data(), lda, bm, C.data(), ldc, e, pool);
    } else {
        const i64 lda1 = k1 + 2, lda2 = c.K - k1 + 7;
        std::vector<float> A1(static_cast<std::size_t>(c.M * lda1), NAN), A2(static_cast<std::size_t>(c.M * lda2), NAN);
        for (i64 m = 0; m < c.M; ++m)
            for (i64 k = 0; k < c.K; ++k) (k < k1 ? A1[m * lda1 + k] : A2[m * lda2 + k - k1]) = A[m * lda + k];
        gg::SplitA sa;
        sa.a1 = A1.data(), sa.lda1 = lda1, sa.k1 = k1;
        sa.a2 = A2.data(), sa.lda2 = lda2;
        gg::gemm(c.M, c.N, c.K, sa, bm, C.data(), ldc, e, pool);
    }
    double worst = 0;
    for (i64 m = 0; m < c.M; ++m) {
        for (i64 n = 0; n < c.N; ++n) {
            double s = c.accumulate ? C0[m * ldc + n] : (c.bias ? bias[n] : 0.0), mag = std::fabs(s);
            for (i64 k = 0; k < c.K; ++k) {
                s += static_cast<double>(A[m * lda + k]) * B[k * ldb + n];
                mag += std::fabs(static_cast<double>(A[m * lda + k]) * B[k * ldb + n]);
            }
            if (c.residual) s += R[m * ldr + n], mag += std::fabs(R[m * ldr + n]);
            const double want = act_ref(s, act);
            const double err = std::fabs(C[m * ldc + n] - want) / (1e-6 + 1e-5 * mag);
            if (!(err <= worst)) worst = err;  // NaN too
        }
        // Padding between rows of C is untouched.
        for (i64 n = c.N; n < ldc; ++n) REQUIRE(C[m * ldc + n] == C0[m * ldc + n]);
    }
    INFO("M=" << c.M << " N=" << c.N << " K=" << c.K << " k1=" << k1 << " packed=" << c.packed << " bias=" << c.bias
              << " acc=" << c.accumulate << " res=" << c.residual << " act=" << static_cast<int>(c.act));
    REQUIRE(worst <= 1.0);
}

}  // namespace

TEST_CASE("gemm: every supported ISA matches a double reference on odd shapes", "[gemm]") {
    IsaGuard guard;
    const auto list = isas();
    REQUIRE(!list.empty());
    std::mt19937 rng(7);
    for (gg::Isa isa : list) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        for (i64 M : {1, 2, 3, 5, 6, 7, 8, 9, 13, 25})
            for (i64 N : {1, 3, 8, 15, 16, 17, 24, 33, 40, 64, 70})
                for (i64 K : {1, 2, 7, 64, 300}) {
                    const bool packed = (M + N + K) % 2 == 0;
                    check_gemm({M, N, K, packed, K % 3 != 0, false, false, kern::Act::linear}, rng, nullptr);
                    check_gemm({M, N, K, !packed, false, true, N % 2 == 1, kern::Act::relu}, rng, nullptr);
                }
        // Epilogues: bias + residual + relu, a non-fused activation, accumulate with K blocks
        // (blocks are 256 to 1024 deep, by the L1 size: K > 2048 makes at least three).
        check_gemm({17, 45, 700, true, true, false, true, kern::Act::relu}, rng, nullptr);
        check_gemm({17, 45, 2100, true, true, false, true, kern::Act::relu}, rng, nullptr);
        check_gemm({7, 40, 3100, false, false, true, true, kern::Act::tanh}, rng, nullptr);
        check_gemm({9, 33, 513, false, true, false, false, kern::Act::tanh}, rng, nullptr);
        check_gemm({4, 200, 1030, true, false, true, true, kern::Act::linear}, rng, nullptr);
        // N = 16k + 8 ends in 1.5-panel tiles (AVX2): with residual, K blocks and tanh after.
        check_gemm({11, 40, 600, true, true, false, true, kern::Act::tanh}, rng, nullptr);
        check_gemm({6, 24, 520, true, false, true, true, kern::Act::relu}, rng, nullptr);
        // ... and on AVX-512 in tiles of a vector and a half vector per row, up to 8 rows: every
        // height, the clamp epilogue, a ragged last column (N = 16k + 1..7) and both with bias.
        for (i64 M : {1, 4, 8, 12, 15})
            for (i64 N : {24, 21, 40, 1000}) {
                check_gemm({M, N, 96, true, true, false, M % 2 == 0, kern::Act::clip}, rng, nullptr);
                check_gemm({M, N, 1100, true, false, true, true, kern::Act::clip}, rng, nullptr);
            }
        check_gemm({3, 17, 0, true, true, false, true, kern::Act::relu}, rng, nullptr);  // K = 0
    }
}

TEST_CASE("gemm: A in two parts read in place matches a double reference", "[gemm]") {
    // Widths sharing 16 or more run as segments of that length in a block (64 | 128: three of 64,
    // a recurrent step's [x_t | h]; 48 | 80: eight of 16; 1024 | 1024 across blocks); others, or
    // an empty part, as blocks of each part (C stored and reloaded between them). The padding
    // between A's rows is NaN, so reading past a part's width shows.
    IsaGuard guard;
    std::mt19937 rng(23);
    graft::cpu::ThreadPool two(2);
    struct Split {
        i64 k1, k2;
    };
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        for (const Split sp : {Split{64, 128}, Split{48, 80}, Split{1024, 1024}, Split{5, 16}, Split{300, 700},
                               Split{0, 40}, Split{40, 0}, Split{7, 3}})
            for (i64 M : {2, 9, 32}) {
                const i64 K = sp.k1 + sp.k2;
                check_gemm({M, 512, K, true, true, false, false, kern::Act::linear}, rng, nullptr, sp.k1);
                check_gemm({M, 37, K, M % 2 == 0, false, true, true, kern::Act::relu}, rng, &two, sp.k1);
            }
    }
}

TEST_CASE("gemm: a product over the first K rows of packed panels matches a double reference", "[gemm]") {
    // BMatrix::panel_k: B packed with Kp rows per panel, the product over its first K (a recurrent
    // step over [W] of [W; R]). One row runs the tile kernels too (the matrix-vector kernel
    // assumes K rows per panel).
    IsaGuard guard;
    std::mt19937 rng(31);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        for (i64 M : {1, 5, 32})
            for (i64 N : {512, 37})
                for (i64 K : {64, 7}) {
                    const i64 Kp = K + 128;
                    std::vector<float> a(static_cast<std::size_t>(M * K)), w(static_cast<std::size_t>(Kp * N));
                    for (float& v : a) v = u(rng);
                    for (float& v : w) v = u(rng);
                    const std::vector<float> packed = gg::pack_b(w.data(), N, Kp, N);
                    gg::BMatrix b;
                    b.data = packed.data();
                    b.packed = true;
                    b.panel_k = Kp;
                    std::vector<float> c(static_cast<std::size_t>(M * N), 7.f);
                    gg::gemm(M, N, K, a.data(), K, b, c.data(), N, gg::Epilogue{});
                    double worst = 0;
                    for (i64 m = 0; m < M; ++m)
                        for (i64 n = 0; n < N; ++n) {
                            double ref = 0;
                            for (i64 k = 0; k < K; ++k) ref += double(a[m * K + k]) * w[k * N + n];
                            worst = std::max(worst, std::fabs(c[m * N + n] - ref));
                        }
                    INFO("isa " << gg::isa_name(isa) << " M " << M << " N " << N << " K " << K);
                    CHECK(worst <= 1e-4);
                }
    }
}

TEST_CASE("gemm: the thread pool splits rows or columns without changing results", "[gemm]") {
    std::mt19937 rng(11);
    for (int threads : {2, 3}) {
        graft::cpu::ThreadPool pool(threads);
        REQUIRE(pool.size() == threads);
        check_gemm({1, 1000, 512, true, true, false, false, kern::Act::relu}, rng, &pool);   // skinny: columns
        check_gemm({200, 48, 96, false, true, false, true, kern::Act::linear}, rng, &pool);  // tall: rows
        check_gemm({37, 130, 300, true, false, true, true, kern::Act::tanh}, rng, &pool);
        check_gemm({32, 100, 2500, true, true, false, true, kern::Act::relu}, rng, &pool);
        check_gemm({64, 200, 70, true, true, false, true, kern::Act::tanh}, rng, &pool);  // more columns: columns
        check_gemm({64, 40, 70, false, false, true, false, kern::Act::relu}, rng, &pool);  // more rows: rows
    }
}

TEST_CASE("thread pool: runs every index exactly once, repeatedly", "[gemm]") {
    graft::cpu::ThreadPool pool(3);
    std::vector<int> hits(1000, 0);
    for (int round = 0; round < 50; ++round)
        graft::cpu::parallel_for(&pool, static_cast<i64>(hits.size()), [&](i64 i) { hits[static_cast<std::size_t>(i)]++; });
    for (int h : hits) REQUIRE(h == 50);
}

namespace {

void check_conv(const kern::Conv2DParams& p, bool bias_on, kern::Act a, std::mt19937& rng, graft::cpu::ThreadPool* pool) {
    auto x = rand_vec(rng, p.n * p.h * p.w * p.cin);
    const i64 K = p.kh * p.kw * p.cin;
    auto w = rand_vec(rng, K * p.cout);
    auto b = rand_vec(rng, p.cout);
    std::vector<float> y(static_cast<std::size_t>(p.n * p.oh * p.ow * p.cout), 7.f);
    auto packed = gg::pack_b(w.data(), p.cout, K, p.cout);
    gg::BMatrix bm;
    bm.data = packed.data();
    bm.packed = true;
    kern::ActParams act{a};
    gg::Epilogue e;
    e.bias = bias_on ? b.data() : nullptr;
    e.act = &act;
    gg::conv2d(p, x.data(), bm, y.data(), e, pool);
    double worst = 0;
    for (i64 n = 0; n < p.n; ++n)
        for (i64 oy = 0; oy < p.oh; ++oy)
            for (i64 ox = 0; ox < p.ow; ++ox)
                for (i64 co = 0; co < p.cout; ++co) {
                    double s = bias_on ? b[co] : 0.0, mag = std::fabs(s);
                    for (i64 ky = 0; ky < p.kh; ++ky)
                        for (i64 kx = 0; kx < p.kw; ++kx) {
                            const i64 iy = oy * p.stride_h - p.pad_top + ky * p.dil_h;
                            const i64 ix = ox * p.stride_w - p.pad_left + kx * p.dil_w;
                            if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                            for (i64 ci = 0; ci < p.cin; ++ci) {
                                const double t = static_cast<double>(x[((n * p.h + iy) * p.w + ix) * p.cin + ci]) *
                                                 w[((ky * p.kw + kx) * p.cin + ci) * p.cout + co];
                                s += t, mag += std::fabs(t);
                            }
                        }
                    const double got = y[((n * p.oh + oy) * p.ow + ox) * p.cout + co];
                    worst = std::max(worst, std::fabs(got - act_ref(s, {a})) / (1e-6 + 1e-5 * mag));
                }
    INFO("conv " << p.n << "x" << p.h << "x" << p.w << "x" << p.cin << " k" << p.kh << "x" << p.kw << " s" << p.stride_h
                 << " d" << p.dil_h << " cout " << p.cout);
    REQUIRE(worst <= 1.0);
}

kern::Conv2DParams geom(i64 n, i64 h, i64 w, i64 cin, i64 k, i64 cout, i64 stride, i64 dil, bool same) {
    kern::Conv2DParams p{};
    p.n = n, p.h = h, p.w = w, p.cin = cin, p.kh = k, p.kw = k, p.cout = cout;
    p.stride_h = p.stride_w = stride, p.dil_h = p.dil_w = dil;
    const i64 span = (k - 1) * dil + 1;
    if (same) {
        p.oh = (h + stride - 1) / stride, p.ow = (w + stride - 1) / stride;
        const i64 ph = std::max<i64>(0, (p.oh - 1) * stride + span - h), pw = std::max<i64>(0, (p.ow - 1) * stride + span - w);
        p.pad_top = ph / 2, p.pad_left = pw / 2;
    } else {
        p.oh = (h - span) / stride + 1, p.ow = (w - span) / stride + 1;
    }
    return p;
}

}  // namespace

TEST_CASE("gemm conv2d: implicit GEMM over NHWC matches a direct double loop", "[gemm]") {
    IsaGuard guard;
    std::mt19937 rng(3);
    graft::cpu::ThreadPool pool(2);
    for (gg::Isa isa : isas()) {
        REQUIRE(gg::set_isa(isa));
        INFO("isa " << gg::isa_name(isa));
        check_conv(geom(2, 9, 7, 3, 3, 17, 1, 1, true), true, kern::Act::relu, rng, nullptr);     // tiny Cin: per-tile im2col
        check_conv(geom(1, 11, 11, 3, 7, 20, 2, 1, true), true, kern::Act::linear, rng, &pool);  // 7x7/2
        // Tiny Cin read in place, one segment per kernel row, where no tap is in the padding along W:
        check_conv(geom(2, 10, 12, 3, 3, 32, 2, 1, false), true, kern::Act::relu, rng, nullptr);  // every pixel
        check_conv(geom(1, 10, 9, 2, 3, 8, 1, 2, true), true, kern::Act::linear, rng, nullptr);   // dilated: copied
        // Rows wide enough for whole tiles inside one output row (their pointers stepped), beside
        // tiles that cross rows or touch the padding on the left, right, top or bottom:
        check_conv(geom(2, 17, 41, 3, 3, 32, 2, 1, true), true, kern::Act::relu, rng, nullptr);
        check_conv(geom(1, 15, 60, 3, 7, 16, 2, 1, true), true, kern::Act::linear, rng, &pool);  // 7x7/2
        check_conv(geom(1, 8, 9, 20, 3, 33, 1, 1, true), false, kern::Act::tanh, rng, nullptr);  // taps grouped per block
        check_conv(geom(2, 6, 6, 40, 3, 16, 2, 1, true), true, kern::Act::relu, rng, &pool);     // stride 2
        check_conv(geom(1, 9, 9, 24, 3, 8, 1, 2, false), true, kern::Act::linear, rng, nullptr); // dilation, valid
        check_conv(geom(1, 5, 4, 300, 3, 18, 1, 1, true), true, kern::Act::linear, rng, nullptr);// Cin split in chunks
        check_conv(geom(1, 7, 7, 32, 1, 24, 2, 1, false), true, kern::Act::relu, rng, nullptr);  // 1x1 stride 2
        check_conv(geom(3, 5, 5, 19, 1, 21, 1, 1, false), true, kern::Act::relu, rng, &pool);    // 1x1: plain GEMM
    }
}

}  // namespace graft_test_gemm
