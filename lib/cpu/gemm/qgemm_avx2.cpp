// The int8 kernels for AVX2 (qgemm.hpp): int8 weights widened to int16 by vpmovsxbw, pairs of k
// multiplied and summed into int32 by vpmaddwd. Compiled with target attributes, like the float
// micro-kernels, so the rest of the library needs no -mavx2.
#include "cpu/gemm/qkernel.hpp"
#include "cpu/simd.hpp"

#ifdef GRAFT_SIMD_X86
GRAFT_SIMD_AVX2_BEGIN

namespace graft::cpu::gemm {
namespace {

struct Q {
    using Acc = __m256i;
    using Wv = __m256i;
    static constexpr int N = 8;
    static inline Acc zero() { return _mm256_setzero_si256(); }
    static inline Wv load_w(const std::int8_t* p) {
        return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    static inline __m256i bcast(const std::int32_t* p) { return _mm256_set1_epi32(*p); }
    static inline Acc madd(Acc acc, __m256i a, Wv w) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, w)); }
    static inline void to_float(Acc acc, float sa, const float* sw, const float* add, float* dst) {
        __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_mul_ps(_mm256_set1_ps(sa), _mm256_loadu_ps(sw)));
        if (add) v = _mm256_add_ps(v, _mm256_loadu_ps(add));
        _mm256_storeu_ps(dst, v);
    }
};

#include "cpu/gemm/qkernel_impl.inc"

float quantise(const float* x, std::int64_t K, std::int16_t* q) {
    const __m256 sign = _mm256_set1_ps(-0.f);
    __m256 m = _mm256_setzero_ps(), nan = _mm256_setzero_ps();
    std::int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
        const __m256 v = _mm256_loadu_ps(x + k);
        m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v));
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));  // max_ps drops NaNs
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, m);
    float amax = 0.f;
    for (float v : lanes) amax = v > amax ? v : amax;
    bool any_nan = _mm256_movemask_ps(nan) != 0;
    for (; k < K; ++k) {
        const float v = x[k] < 0.f ? -x[k] : x[k];
        amax = v > amax ? v : amax;
        any_nan = any_nan || v != v;
    }
    if (any_nan) amax = __builtin_nanf("");
    // A row of zeros (or below 1e-30, where 127 / amax could overflow), or one that is not
    // finite, quantises to zeros with scale amax / 127: the products come out (nearly) 0, or NaN
    // as the float product would.
    if (!(amax >= 1e-30f && amax <= 3.4e38f)) {
        for (std::int64_t j = 0; j < K + K % 2; ++j) q[j] = 0;
        return amax / 127.f;
    }
    const float inv = 127.f / amax;
    const __m256 vi = _mm256_set1_ps(inv);
    k = 0;
    for (; k + 16 <= K; k += 16) {
        const __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + k), vi));
        const __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + k + 8), vi));
        // packs works within 128-bit lanes: a0-3 b0-3 a4-7 b4-7; the permute restores the order.
        const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + k), p);
    }
    for (; k < K; ++k) q[k] = static_cast<std::int16_t>(__builtin_nearbyintf(x[k] * inv));
    if (K % 2) q[K] = 0;
    return amax / 127.f;
}

}  // namespace

const QKernels* qkernels_avx2() {
    static const QKernels k = make_qkernels(&quantise);
    return &k;
}

}  // namespace graft::cpu::gemm
GRAFT_SIMD_AVX2_END

#else
namespace graft::cpu::gemm {
const QKernels* qkernels_avx2() { return nullptr; }
}  // namespace graft::cpu::gemm
#endif
