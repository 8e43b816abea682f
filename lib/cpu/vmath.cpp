// Vectorized tanh / sigmoid / GELU and the recurrent cells built on them (see vmath.hpp): one text
// (vmath_impl.inc) compiled for AVX-512, AVX2+FMA and portable 4-float GCC vectors.
#include "cpu/vmath.hpp"

#include "cpu/gemm/gemm.hpp"
#include "cpu/simd.hpp"

namespace graft::cpu::vmath {
namespace {

struct Table {
    void (*tanh)(const float*, float*, std::int64_t);
    void (*sigmoid)(const float*, float*, std::int64_t);
    void (*gelu)(const float*, float*, std::int64_t);
    void (*lstm_cell)(const float*, float*, float*, std::int64_t);
    void (*gru_blend)(const float*, const float*, float*, std::int64_t);
    void (*softmax_rows)(const float*, float*, std::int64_t, std::int64_t, float);
    void (*layer_norm_rows)(const float*, const float*, const float*, float*, std::int64_t, std::int64_t, float);
};

namespace vm_generic {
struct V : simd::Vec4 {
    typedef unsigned U __attribute__((vector_size(16)));
    // Round to nearest (|x| < 2^22) by adding and removing 1.5 * 2^23.
    static inline T round(T x) { return (x + 12582912.f) - 12582912.f; }
    // 2^n (n in [-126, 127]): n + 127 lands in the low mantissa bits of n + 1.5 * 2^23 + 127;
    // shift them into the exponent.
    static inline T pow2(T n) {
        const T t = n + (12582912.f + 127.f);
        U u;
        __builtin_memcpy(&u, &t, sizeof u);
        u = u << 23;
        T r;
        __builtin_memcpy(&r, &u, sizeof r);
        return r;
    }
    // e 2^n in two steps of normal powers (n/2 and the rest), so subnormal results round once.
    static inline T scale(T e, T n) {
        const T n1 = round(n * 0.5f);
        return e * pow2(n1) * pow2(n - n1);
    }
    static inline T if_neg(T x, T a, T b) { return x < 0.f ? b : a; }
};
#include "cpu/vmath_impl.inc"
}  // namespace vm_generic

#ifdef GRAFT_SIMD_X86
GRAFT_SIMD_AVX2_BEGIN
namespace vm_avx2 {
struct V : simd::Avx2 {
    static inline T round(T x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static inline T pow2(T n) {  // n in [-126, 127]
        const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
        return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
    }
    static inline T scale(T e, T n) {
        const T n1 = round(_mm256_mul_ps(n, _mm256_set1_ps(0.5f)));
        return _mm256_mul_ps(_mm256_mul_ps(e, pow2(n1)), pow2(_mm256_sub_ps(n, n1)));
    }
    static inline T if_neg(T x, T a, T b) { return _mm256_blendv_ps(a, b, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ)); }
};
#include "cpu/vmath_impl.inc"
}  // namespace vm_avx2
GRAFT_SIMD_AVX2_END

GRAFT_SIMD_AVX512_BEGIN
namespace vm_avx512 {
struct V : simd::Avx512 {
    static inline T round(T x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static inline T scale(T e, T n) { return _mm512_scalef_ps(e, n); }
    static inline T if_neg(T x, T a, T b) {
        return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), a, b);
    }
};
#include "cpu/vmath_impl.inc"
}  // namespace vm_avx512
GRAFT_SIMD_AVX512_END
#endif


const Table& table() { return GRAFT_SIMD_SELECT(gemm::active_isa(), vm_generic::table, vm_avx2::table, vm_avx512::table); }

}  // namespace

void tanh(const float* x, float* y, std::int64_t n) {
    if (n > 0) table().tanh(x, y, n);
}
void sigmoid(const float* x, float* y, std::int64_t n) {
    if (n > 0) table().sigmoid(x, y, n);
}
void gelu(const float* x, float* y, std::int64_t n) {
    if (n > 0) table().gelu(x, y, n);
}
void lstm_cell(const float* z, float* c, float* h, std::int64_t u) {
    if (u > 0) table().lstm_cell(z, c, h, u);
}
void gru_blend(const float* zg, const float* hh, float* h, std::int64_t u) {
    if (u > 0) table().gru_blend(zg, hh, h, u);
}
void softmax_rows(const float* x, float* y, std::int64_t rows, std::int64_t len, float scale) {
    if (rows > 0 && len > 0) table().softmax_rows(x, y, rows, len, scale);
}
void layer_norm_rows(const float* x, const float* gamma, const float* beta, float* y, std::int64_t rows, std::int64_t k,
                     float eps) {
    if (rows > 0 && k > 0) table().layer_norm_rows(x, gamma, beta, y, rows, k, eps);
}

}  // namespace graft::cpu::vmath
