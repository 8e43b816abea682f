// The bf16 kernels for AVX-512 BF16 (qgemm.hpp, Precision::bf16): vdpbf16ps multiplies a pair of
// k of one row (broadcast) with the same pair of 16 columns and adds both products to 16 float
// sums, twice the multiply-adds of an fp32 FMA per instruction, from half the weights' bytes.
// Compiled with target attributes, so the rest of the library needs no -mavx512bf16.
#include "cpu/gemm/bkernel.hpp"
#include "cpu/simd.hpp"

#ifdef GRAFT_SIMD_X86
#include <cstring>
#include <utility>

GRAFT_SIMD_AVX512BF16_BEGIN

namespace graft::cpu::gemm {
namespace {

inline __m512bh as_bh(__m512i v) {
    __m512bh r;
    std::memcpy(&r, &v, sizeof r);
    return r;
}

inline __mmask16 col_mask(int cols) {
    return cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (cols < 0 ? 0 : cols)) - 1);
}

/// R rows x P panels: acc[r][p] sums the 16 columns of panel p for row r.
template <int R, int P>
void btile(const BTile& t) {
    __m512 acc[R][P];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) acc[r][p] = _mm512_setzero_ps();
    const BPair* b = t.b;
    for (std::int64_t k = 0; k < t.K2; ++k) {
        __m512bh w[P];
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) {
            const BPair* src = b + p * t.bps + k * 16;
            if (t.prefetch) _mm_prefetch(reinterpret_cast<const char*>(src + 8 * 16), _MM_HINT_T0);
            w[p] = as_bh(_mm512_loadu_si512(src));
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const __m512bh a = as_bh(_mm512_set1_epi32(static_cast<int>(t.a[r * t.lda + k])));
#pragma GCC unroll 8
            for (int p = 0; p < P; ++p) acc[r][p] = _mm512_dpbf16_ps(acc[r][p], a, w[p]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        float* c = t.c + r * t.ldc;
        const float* add = t.accumulate ? c : t.init;
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) {
            const __mmask16 m = col_mask(t.cols - 16 * p);
            __m512 v = acc[r][p];
            if (add) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, add + 16 * p));
            _mm512_mask_storeu_ps(c + 16 * p, m, v);
        }
    }
}

void convert(const float* x, std::int64_t K, BPair* q) {
    std::int64_t k = 0;
    for (; k + 32 <= K; k += 32) {
        const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + k + 16), _mm512_loadu_ps(x + k));
        std::memcpy(q + k / 2, &v, sizeof v);
    }
    if (k < K) {  // the tail, zero-padded to the pair
        const std::int64_t left = K - k;
        const __mmask16 lo = col_mask(static_cast<int>(left)), hi = col_mask(static_cast<int>(left - 16));
        const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, x + k + 16), _mm512_maskz_loadu_ps(lo, x + k));
        std::memcpy(q + k / 2, &v, static_cast<std::size_t>((left + 1) / 2) * sizeof(BPair));
    }
}

template <int... R>
constexpr BKernels make(std::integer_sequence<int, 0, R...>) {
    return BKernels{{nullptr, &btile<R, kBPanels>...}, {nullptr, &btile<R, 1>...}, &btile<1, kBWide>, &convert};
}

}  // namespace

const BKernels* bkernels_avx512() {
    static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
    static const BKernels k = make(std::make_integer_sequence<int, kBRows + 1>{});
    return has ? &k : nullptr;
}

}  // namespace graft::cpu::gemm

GRAFT_SIMD_AVX512BF16_END

#else
namespace graft::cpu::gemm {
const BKernels* bkernels_avx512() { return nullptr; }
}  // namespace graft::cpu::gemm
#endif
