// GEMM microbenchmark: graft's run-time dispatched GEMM (prepacked B, as the Dense/Conv kernels
// use it) against OpenBLAS cblas_sgemm on the same row-major operands, single-threaded.
//
//   gemm_bench [--isa generic|avx2|avx512] [--reps-seconds S] [--shape M,N,K ...]
// Sizes: square 64..2048, and the skinny shapes of batch 1 / 32 (M = 1 or 32 rows against
// the benchmark models' weight matrices). Prints GFLOP/s (best of repeated timings) and the
// ratio graft/OpenBLAS. OpenBLAS is a benchmark-only dependency; the library never links it.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/gemm/gemm.hpp"

namespace gg = graft::cpu::gemm;
using Clock = std::chrono::steady_clock;

template <class F>
double best_seconds(F&& f, double budget) {
    f();  // warm-up
    double best = 1e30, total = 0;
    int n = 0;
    while (total < budget || n < 3) {
        const auto t = Clock::now();
        f();
        const double s = std::chrono::duration<double>(Clock::now() - t).count();
        best = std::min(best, s);
        total += s;
        ++n;
    }
    return best;
}

int main(int argc, char** argv) {
    double budget = 0.3;
    struct Shape { long M, N, K; };
    std::vector<Shape> only;  // --shape M,N,K (repeatable): these instead of the built-in list
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--isa" && i + 1 < argc) {
            const std::string v = argv[++i];
            const gg::Isa isa = v == "generic" ? gg::Isa::generic : v == "avx2" ? gg::Isa::avx2 : gg::Isa::avx512;
            if (!gg::set_isa(isa)) {
                std::fprintf(stderr, "this CPU does not support %s\n", v.c_str());
                return 2;
            }
        } else if (a == "--reps-seconds" && i + 1 < argc) {
            budget = std::atof(argv[++i]);
        } else if (a == "--shape" && i + 1 < argc) {
            Shape s{};
            if (std::sscanf(argv[++i], "%ld,%ld,%ld", &s.M, &s.N, &s.K) != 3 || s.M < 1 || s.N < 1 || s.K < 1) {
                std::fprintf(stderr, "--shape takes M,N,K (positive)\n");
                return 2;
            }
            only.push_back(s);
        } else {
            std::fprintf(stderr, "usage: gemm_bench [--isa generic|avx2|avx512] [--reps-seconds S] [--shape M,N,K ...]\n");
            return 2;
        }
    }
    openblas_set_num_threads(1);
    std::printf("graft GEMM (%s, prepacked B) vs OpenBLAS %s cblas_sgemm, 1 thread, best of >= %.1f s\n\n",
                gg::isa_name(gg::active_isa()), openblas_get_config(), budget);
    std::printf("| M | N | K | graft GFLOP/s | OpenBLAS GFLOP/s | graft/OpenBLAS | max rel diff |\n|---|---|---|---|---|---|---|\n");
    std::vector<Shape> shapes;
    for (long s : {64, 128, 256, 384, 512, 768, 1024, 1536, 2048}) shapes.push_back({s, s, s});
    // batch-1 and batch-32 rows against the models' weights (mlp, lstm, resnet18k's Dense, conv-as-GEMM)
    for (long m : {1L, 32L}) {
        shapes.push_back({m, 512, 784});
        shapes.push_back({m, 512, 512});
        shapes.push_back({m, 10, 512});
        shapes.push_back({m, 512, 128});   // LSTM recurrent step
        shapes.push_back({m, 1000, 512});  // resnet18k dense
        shapes.push_back({m, 2048, 2048});
    }
    shapes.push_back({196, 256, 2304});  // resnet18k stage 3 conv at batch 1 as a GEMM
    shapes.push_back({3136, 64, 576});   // stage 1
    // MobileNet v2's pointwise convolutions at batch 1 (pixels x out channels x in channels): the
    // small-K expansions and projections
    shapes.push_back({12544, 16, 32});
    shapes.push_back({12544, 96, 16});
    shapes.push_back({3136, 24, 96});
    shapes.push_back({3136, 144, 24});
    shapes.push_back({3136, 24, 144});
    shapes.push_back({784, 192, 32});
    shapes.push_back({196, 384, 64});
    shapes.push_back({49, 1280, 320});
    if (!only.empty()) shapes = only;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    for (const auto& s : shapes) {
        std::vector<float> A(s.M * s.K), B(s.K * s.N), C1(s.M * s.N), C2(s.M * s.N);
        for (auto& x : A) x = d(rng);
        for (auto& x : B) x = d(rng);
        const auto packed = gg::pack_b(B.data(), s.N, s.K, s.N);
        gg::BMatrix bm;
        bm.data = packed.data();
        bm.packed = true;
        const double flop = 2.0 * s.M * s.N * s.K;
        const double tg = best_seconds([&] { gg::gemm(s.M, s.N, s.K, A.data(), s.K, bm, C1.data(), s.N, {}); }, budget);
        const double tb = best_seconds([&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.M, s.N, s.K, 1.f, A.data(), s.K, B.data(), s.N, 0.f,
                        C2.data(), s.N);
        }, budget);
        double diff = 0;
        for (size_t i = 0; i < C1.size(); ++i)
            diff = std::max(diff, std::fabs(double(C1[i]) - C2[i]) / (1.0 + std::fabs(double(C2[i]))));
        std::printf("| %ld | %ld | %ld | %.1f | %.1f | %.2f | %.1e |\n", s.M, s.N, s.K, flop / tg / 1e9, flop / tb / 1e9,
                    tb / tg, diff);
        std::fflush(stdout);
    }
    return 0;
}
