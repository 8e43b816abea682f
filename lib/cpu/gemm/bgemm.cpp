// bf16 matrix products (qgemm.hpp, Precision::bf16): rounding and packing, the portable kernel,
// the driver. The weights are rounded to bf16 once, the rows at every run; the products of
// pairs are summed in float (vdpbf16ps on AVX-512 BF16, plain float arithmetic here).
#include <algorithm>
#include <cstring>
#include <utility>

#include "cpu/gemm/bkernel.hpp"
#include "cpu/threadpool.hpp"

namespace graft::cpu::gemm {
namespace {

using i64 = std::int64_t;

i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }

/// Round to nearest even, as vcvtne2ps2bf16: NaNs stay (quiet) NaNs, denormals become zeros.
std::uint16_t to_bf16(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
    if ((u & 0x7f800000u) == 0) return static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>(u >> 16);
}

float from_bf16(std::uint32_t h) {
    const std::uint32_t u = (h & 0xffffu) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

namespace generic {

template <int R, int P>
void btile(const BTile& t) {
    float acc[R][P * 16] = {};
    for (i64 k = 0; k < t.K2; ++k)
        for (int r = 0; r < R; ++r) {
            const BPair a = t.a[r * t.lda + k];
            const float a0 = from_bf16(a), a1 = from_bf16(a >> 16);
            for (int p = 0; p < P; ++p)
                for (int j = 0; j < 16; ++j) {
                    const BPair w = t.b[p * t.bps + k * 16 + j];
                    float& s = acc[r][p * 16 + j];
                    s += a1 * from_bf16(w >> 16);  // the odd k first, as vdpbf16ps
                    s += a0 * from_bf16(w);
                }
        }
    for (int r = 0; r < R; ++r) {
        float* c = t.c + r * t.ldc;
        const float* add = t.accumulate ? c : t.init;
        for (int j = 0; j < t.cols; ++j) c[j] = acc[r][j] + (add ? add[j] : 0.f);
    }
}

void convert(const float* x, i64 K, BPair* q) {
    for (i64 k = 0; k < K; k += 2) q[k / 2] = to_bf16(x[k]) | (k + 1 < K ? BPair{to_bf16(x[k + 1])} << 16 : 0u);
}

template <int... R>
BKernels make(std::integer_sequence<int, 0, R...>) {
    return BKernels{{nullptr, &btile<R, kBPanels>...}, {nullptr, &btile<R, 1>...}, &btile<1, kBWide>, &convert};
}

}  // namespace generic

const BKernels& kernels() {
    const BKernels* fast = bkernels_avx512();
    return fast && active_isa() == Isa::avx512 ? *fast : bkernels_generic();
}

// Tasks smaller than this many multiply-adds stay on the calling thread.
constexpr i64 kParallelMin = 1 << 16;

}  // namespace

const BKernels& bkernels_generic() {
    static const BKernels k = generic::make(std::make_integer_sequence<int, kBRows + 1>{});
    return k;
}

i64 bpacked_pairs(i64 K, i64 N) { return ceil_div(N, 16) * ceil_div(K, 2) * 16; }

void bpack(const float* w, i64 ldw, i64 K, i64 N, BPair* out) {
    const i64 K2 = ceil_div(K, 2);
    for (i64 n = 0; n < N; ++n) {
        BPair* panel = out + (n / 16) * K2 * 16 + n % 16;
        for (i64 k = 0; k < K; ++k) panel[(k / 2) * 16] |= BPair{to_bf16(w[k * ldw + n])} << (16 * (k % 2));
    }
}

void bgemm(i64 M, i64 N, i64 K, const float* A, i64 lda, const BPair* B, float* C, i64 ldc, const Epilogue& e,
           BPair* work, ThreadPool* pool) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        epilogue_only(M, 0, N, C, ldc, e);
        return;
    }
    const BKernels& bk = kernels();
    const i64 K2 = ceil_div(K, 2);
    for (i64 m = 0; m < M; ++m) bk.convert(A + m * lda, K, work + m * K2);

    const i64 panels = ceil_div(N, 16);
    const bool prefetch = K2 * 64 * panels > (i64{1} << 19);
    const bool act = e.act && e.act->kind != Act::linear;
    auto tile = [&](i64 m0, int rows, i64 p, int np) {
        BTile t;
        t.a = work + m0 * K2;
        t.lda = K2;
        t.b = B + p * K2 * 16;
        t.bps = K2 * 16;
        t.K2 = K2;
        t.c = C + m0 * ldc + p * 16;
        t.ldc = ldc;
        t.cols = static_cast<int>(std::min<i64>(np * 16, N - p * 16));
        t.init = e.accumulate || !e.bias ? nullptr : e.bias + p * 16;
        t.accumulate = e.accumulate;
        t.prefetch = prefetch;
        (np == kBWide ? bk.wide : np == kBPanels ? bk.rows[rows] : bk.narrow[rows])(t);
        if (e.residual || act)
            for (int r = 0; r < rows; ++r) {
                float* c = t.c + r * ldc;
                if (e.residual) {
                    const float* res = e.residual + (m0 + r) * e.ldr + p * 16;
                    for (int j = 0; j < t.cols; ++j) c[j] += res[j];
                }
                if (act) activate(c, c, t.cols, *e.act);
            }
    };
    // Panels [p0, p1) of rows [m0, m1): one row kBWide panels at a time, else tiles of kBRows
    // rows by kBPanels panels, every row tile of a panel group while its B is in cache.
    auto run = [&](i64 p0, i64 p1, i64 m0, i64 m1) {
        i64 p = p0;
        if (m1 - m0 == 1)
            for (; p + kBWide <= p1; p += kBWide) tile(m0, 1, p, kBWide);
        for (; p < p1; p += kBPanels) {
            const int np = p + kBPanels <= p1 ? kBPanels : 1;
            for (i64 m = m0; m < m1; m += kBRows) tile(m, static_cast<int>(std::min<i64>(kBRows, m1 - m)), p, np);
        }
    };
    const int T = pool_size(pool);
    if (T <= 1 || M * N * K < kParallelMin) {
        run(0, panels, 0, M);
        return;
    }
    if (panels >= 2 * T || M <= kBRows) {  // split the columns, in whole tiles
        const i64 unit = M == 1 ? kBWide : kBPanels, units = ceil_div(panels, unit), chunk = ceil_div(units, T) * unit;
        parallel_for(pool, ceil_div(panels, chunk),
                     [&](i64 i) { run(i * chunk, std::min(panels, (i + 1) * chunk), 0, M); });
        return;
    }
    const i64 chunk = ceil_div(ceil_div(M, kBRows), T) * kBRows;  // few panels, many rows: split the rows
    parallel_for(pool, ceil_div(M, chunk), [&](i64 i) { run(0, panels, i * chunk, std::min(M, (i + 1) * chunk)); });
}

}  // namespace graft::cpu::gemm
