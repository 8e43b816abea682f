// graft_roofline: this machine's limits, measured, for the roofline column of bench/compare.js.
//
//   graft_roofline [--threads T] [--seconds S]
//
// Prints one JSON line: the CPU model, the ISA graft's kernels can use, the L2/L3 sizes, and for
// 1 and T threads
//   - fma_gflops: the fused multiply-add peak, from independent FMA chains in registers (as many
//     accumulators as it takes to hide the FMA latency) at the widest vector width this CPU has;
//   - bf16_gflops (AVX-512 BF16 CPUs only): the same for vdpbf16ps, the peak of --precision bf16;
//   - bw_l2/bw_l3/bw_dram_gbs: read bandwidth from buffers sized to sit in L2 (half of it), in L3
//     (half of it, split over the threads) and in DRAM (8x L3), with vector loads into several
//     accumulators; each thread streams its own buffer;
//   - bw_curve: [bytes, GB/s] pairs, the read bandwidth of all threads together streaming a working
//     set of `bytes` (split over them), for working sets from a quarter of one L2 to 8x the L3 in
//     steps of sqrt(2). The L3 a core can count on is the part others leave it: on a 2-vCPU VM
//     with a 32 MiB L3 the bandwidth held to 8 MB and fell to DRAM's by 24 MB. bench/compare.js
//     reads this curve at a row's own weight size.
// Each figure is the best of repeated timings over about --seconds (default 0.2) per figure, so
// a loaded machine lowers the limits rather than inflating them. Benchmark code, not library code.
#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cpu/caches.hpp"

namespace {

using Clock = std::chrono::steady_clock;

enum class Isa { generic, avx2, avx512 };

Isa detect() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return Isa::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
    return Isa::generic;
}

const char* isa_name(Isa i) { return i == Isa::avx512 ? "avx512" : i == Isa::avx2 ? "avx2" : "generic"; }

// --- FMA peak: `kChains` independent accumulators per iteration, `kIters` iterations. ---
constexpr long kIters = 1 << 22;

// Through memory: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized.
__attribute__((target("avx512f"))) double sum16(__m512 v) {
    float out[16];
    _mm512_storeu_ps(out, v);
    double r = 0;
    for (float x : out) r += x;
    return r;
}

__attribute__((target("avx512f"))) double fma_avx512() {
    __m512 a[12];
    for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_ps(1.0f + 1e-7f * static_cast<float>(i));
    const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
    for (long k = 0; k < kIters; ++k)
#pragma GCC unroll 12
        for (int i = 0; i < 12; ++i) a[i] = _mm512_fmadd_ps(a[i], m, c);
    __m512 s = a[0];
    for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, a[i]);
    return sum16(s);
}

__attribute__((target("avx2,fma"))) double fma_avx2() {
    __m256 a[12];
    for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_ps(1.0f + 1e-7f * static_cast<float>(i));
    const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
    for (long k = 0; k < kIters; ++k)
#pragma GCC unroll 12
        for (int i = 0; i < 12; ++i) a[i] = _mm256_fmadd_ps(a[i], m, c);
    __m256 s = a[0];
    for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, a[i]);
    float out[8];
    _mm256_storeu_ps(out, s);
    double r = 0;
    for (float x : out) r += x;
    return r;
}

double fma_generic() {
    float a[12];
    for (int i = 0; i < 12; ++i) a[i] = 1.0f + 1e-7f * static_cast<float>(i);
    for (long k = 0; k < kIters; ++k)
        for (float& x : a) x = x * 0.999999f + 1e-6f;
    double r = 0;
    for (float x : a) r += x;
    return r;
}

double fma_flops_per_call(Isa isa) {
    const int lanes = isa == Isa::avx512 ? 16 : isa == Isa::avx2 ? 8 : 1;
    return 2.0 * 12 * lanes * static_cast<double>(kIters);
}

double fma_call(Isa isa) { return isa == Isa::avx512 ? fma_avx512() : isa == Isa::avx2 ? fma_avx2() : fma_generic(); }

// --- bf16 dot-product peak (AVX-512 BF16): vdpbf16ps adds two products per float lane. ---
__attribute__((target("avx512f,avx512bf16"))) double bf16_dot() {
    __m512 a[12];
    for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_ps(1e-7f * static_cast<float>(i));
    const __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(2e-3f));
    const __m512bh y = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-4f), _mm512_set1_ps(3e-4f));
    for (long k = 0; k < kIters; ++k)
#pragma GCC unroll 12
        for (int i = 0; i < 12; ++i) a[i] = _mm512_dpbf16_ps(a[i], x, y);
    __m512 s = a[0];
    for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, a[i]);
    return sum16(s);
}

/// Multiply-adds x 2 per bf16_dot() call: 12 chains x 16 lanes x 2 products x kIters.
constexpr double kBf16FlopsPerCall = 2.0 * 12 * 16 * 2 * static_cast<double>(kIters);

// --- read bandwidth ---
__attribute__((target("avx512f"))) float read_avx512(const float* p, std::size_t n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (std::size_t i = 0; i + 64 <= n; i += 64) {
        s0 = _mm512_add_ps(s0, _mm512_load_ps(p + i));
        s1 = _mm512_add_ps(s1, _mm512_load_ps(p + i + 16));
        s2 = _mm512_add_ps(s2, _mm512_load_ps(p + i + 32));
        s3 = _mm512_add_ps(s3, _mm512_load_ps(p + i + 48));
    }
    return static_cast<float>(sum16(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3))));
}

__attribute__((target("avx2"))) float read_avx2(const float* p, std::size_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (std::size_t i = 0; i + 32 <= n; i += 32) {
        s0 = _mm256_add_ps(s0, _mm256_load_ps(p + i));
        s1 = _mm256_add_ps(s1, _mm256_load_ps(p + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_load_ps(p + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_load_ps(p + i + 24));
    }
    float out[8];
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    float r = 0;
    for (float x : out) r += x;
    return r;
}

float read_generic(const float* p, std::size_t n) {
    float s[8] = {};
    for (std::size_t i = 0; i + 8 <= n; i += 8)
        for (std::size_t j = 0; j < 8; ++j) s[j] += p[i + j];
    float r = 0;
    for (float x : s) r += x;
    return r;
}

float read_call(Isa isa, const float* p, std::size_t n) {
    return isa == Isa::avx512 ? read_avx512(p, n) : isa == Isa::avx2 ? read_avx2(p, n) : read_generic(p, n);
}

volatile double g_sink = 0;  // keeps the measured loops from being optimised away

/// Runs `work(t)` on `threads` threads at once, repeatedly for about `budget` seconds; returns the
/// best wall time of one round.
double best_round(int threads, double budget, const std::function<void(int)>& work) {
    double best = 1e30, total = 0;
    int rounds = 0;
    while (total < budget || rounds < 3) {
        const auto t0 = Clock::now();
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
        work(0);
        for (auto& th : pool) th.join();
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        best = std::min(best, s);
        total += s;
        ++rounds;
    }
    return best;
}

double fma_gflops(Isa isa, int threads, double budget) {
    std::vector<double> sinks(static_cast<std::size_t>(threads));
    const double s = best_round(threads, budget, [&](int t) { sinks[static_cast<std::size_t>(t)] = fma_call(isa); });
    for (double x : sinks) g_sink = g_sink + x;
    return fma_flops_per_call(isa) * threads / s / 1e9;
}

/// Read bandwidth in GB/s with each of `threads` threads streaming its own `bytes_per_thread`
/// buffer `passes` times per round.
double read_gbs(Isa isa, int threads, std::size_t bytes_per_thread, double budget) {
    const std::size_t n = bytes_per_thread / sizeof(float) / 64 * 64;
    std::vector<float*> bufs;
    for (int t = 0; t < threads; ++t) {
        auto* p = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
        if (!p) { std::fprintf(stderr, "graft_roofline: out of memory\n"); std::exit(1); }
        for (std::size_t i = 0; i < n; ++i) p[i] = 1e-9f * static_cast<float>(i % 1000);
        bufs.push_back(p);
    }
    // Enough passes per round that a round lasts well above the timer's resolution.
    const int passes = static_cast<int>(std::max<std::size_t>(1, (std::size_t{64} << 20) / (n * sizeof(float))));
    std::vector<double> sinks(static_cast<std::size_t>(threads));
    const double s = best_round(threads, budget, [&](int t) {
        float acc = 0;
        for (int r = 0; r < passes; ++r) acc += read_call(isa, bufs[static_cast<std::size_t>(t)], n);
        sinks[static_cast<std::size_t>(t)] = acc;
    });
    for (double x : sinks) g_sink = g_sink + x;
    for (float* p : bufs) std::free(p);
    return static_cast<double>(n * sizeof(float)) * passes * threads / s / 1e9;
}

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) {
            const auto c = line.find(':');
            return c == std::string::npos ? line : line.substr(c + 2);
        }
    return "unknown";
}

std::string json_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        if (static_cast<unsigned char>(c) >= 0x20) o += c;
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 2;
    double budget = 0.2;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--threads" && i + 1 < argc) threads = std::max(1, std::atoi(argv[++i]));
        else if (a == "--seconds" && i + 1 < argc) budget = std::max(0.01, std::atof(argv[++i]));
        else {
            std::fprintf(stderr, "usage: graft_roofline [--threads T] [--seconds S]\n");
            return 2;
        }
    }
    const Isa isa = detect();
    const long l2 = static_cast<long>(graft::cpu::cache_bytes(2)), l3 = static_cast<long>(graft::cpu::cache_bytes(3));
    __builtin_cpu_init();
    std::string flags;
    const auto flag = [&](bool has, const char* name) {
        if (has) flags += std::string(flags.empty() ? "" : " ") + name;
    };
    flag(__builtin_cpu_supports("avx2"), "avx2");
    flag(__builtin_cpu_supports("fma"), "fma");
    flag(__builtin_cpu_supports("avx512f"), "avx512f");
    flag(__builtin_cpu_supports("avx512vnni"), "avx512vnni");
    flag(__builtin_cpu_supports("avx512bf16"), "avx512bf16");

    std::printf("{\"cpu\": \"%s\", \"isa\": \"%s\", \"flags\": \"%s\", \"l2_bytes\": %ld, \"l3_bytes\": %ld", json_escape(cpu_model()).c_str(),
                isa_name(isa), flags.c_str(), l2, l3);
    std::vector<int> counts{1};
    if (threads > 1) counts.push_back(threads);
    for (int t : counts) {
        const double peak = fma_gflops(isa, t, budget);
        std::string bf16;
        if (__builtin_cpu_supports("avx512bf16")) {
            std::vector<double> sinks(static_cast<std::size_t>(t));
            const double sec = best_round(t, budget, [&](int i) { sinks[static_cast<std::size_t>(i)] = bf16_dot(); });
            for (double x : sinks) g_sink = g_sink + x;
            char text[64];
            std::snprintf(text, sizeof text, ", \"bf16_gflops\": %.1f", kBf16FlopsPerCall * t / sec / 1e9);
            bf16 = text;
        }
        const double bw2 = read_gbs(isa, t, static_cast<std::size_t>(l2 / 2), budget);
        const double bw3 = read_gbs(isa, t, static_cast<std::size_t>(l3 / 2 / t), budget);
        const double bwd = read_gbs(isa, t, static_cast<std::size_t>(std::max(8 * l3, 256L << 20) / t), budget);
        std::printf(", \"t%d\": {\"fma_gflops\": %.1f%s, \"bw_l2_gbs\": %.1f, \"bw_l3_gbs\": %.1f, \"bw_dram_gbs\": %.1f, \"bw_curve\": [",
                    t, peak, bf16.c_str(), bw2, bw3, bwd);
        const double top = 8.0 * static_cast<double>(l3);
        const char* sep = "";
        for (double bytes = static_cast<double>(l2) / 4; bytes <= top * 1.01; bytes *= 1.4142135623730951, sep = ", ")
            std::printf("%s[%.0f, %.1f]", sep, bytes,
                        read_gbs(isa, t, static_cast<std::size_t>(bytes / t), std::min(budget, 0.1)));
        std::printf("]}");
    }
    std::printf("}\n");
    return 0;
}
