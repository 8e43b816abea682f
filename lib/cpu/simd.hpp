// The float vector types the native kernels are written over, one per instruction set: Vec4
// (portable 4-float GCC vectors: SSE2 on x86-64, NEON on arm64, WebAssembly SIMD128 in the browser
// runtime, scalar elsewhere), Avx2 (8 floats,
// AVX2 + FMA) and Avx512 (16 floats, AVX-512F). A kernel text (an *_impl.inc) is compiled once per
// type, inside a region with the matching `#pragma GCC target`, and the copy for the CPU is picked
// at run time (gemm::active_isa()), so the library needs no -mavx2 / -march flag.
//
// Every type has: T (the register), W (floats per register), load / store (unaligned), set1,
// bcast (a float from memory), zero, add, sub, mul, div, fma (a*b + c), fnma (c - a*b),
// max / min (b when either is NaN), max0 (ReLU), and hsum / hmax (the sum / the largest of the
// lanes, by halves; a NaN lane may be passed over by hmax).
//
// A file with per-ISA copies of a kernel text compiles the portable copy as is and, where
// GRAFT_SIMD_X86 is defined, the others between GRAFT_SIMD_AVX2_BEGIN / _END and
// GRAFT_SIMD_AVX512_BEGIN / _END; GRAFT_SIMD_SELECT(isa, generic, avx2, avx512) then picks the
// copy for the instruction set `isa` (a gemm::Isa), the generic one where there are no others.
#pragma once

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace graft::cpu::simd {

struct Vec4 {
    typedef float T __attribute__((vector_size(16)));
    static constexpr int W = 4;
    static inline T load(const float* p) {
        T v;
        __builtin_memcpy(&v, p, sizeof v);
        return v;
    }
    static inline void store(float* p, T v) { __builtin_memcpy(p, &v, sizeof v); }
    static inline T set1(float v) { return T{} + v; }
    static inline T zero() { return T{}; }
    static inline T add(T a, T b) { return a + b; }
    static inline T sub(T a, T b) { return a - b; }
    static inline T mul(T a, T b) { return a * b; }
    static inline T div(T a, T b) { return a / b; }
    static inline T fma(T a, T b, T c) { return a * b + c; }
    static inline T fnma(T a, T b, T c) { return c - a * b; }
#if defined(__wasm_simd128__)
    // WebAssembly SIMD128 (the browser runtime, -msimd128): the arithmetic above is already one
    // f32x4 instruction each; the selects are pmax / pmin, whose rule (pmax(x, y) = x < y ? y : x)
    // gives b, or 0, when either operand is NaN, as the select does. A broadcast is load32_splat.
    static inline T bcast(const float* p) { return (T)wasm_v128_load32_splat(p); }
    static inline T max(T a, T b) { return (T)wasm_f32x4_pmax((v128_t)b, (v128_t)a); }
    static inline T min(T a, T b) { return (T)wasm_f32x4_pmin((v128_t)b, (v128_t)a); }
    static inline T max0(T a) { return (T)wasm_f32x4_pmax(wasm_f32x4_splat(0.f), (v128_t)a); }
#else
    static inline T bcast(const float* p) { return T{} + *p; }
    static inline T max(T a, T b) { return a > b ? a : b; }
    static inline T min(T a, T b) { return a < b ? a : b; }
    static inline T max0(T a) { return a > T{} ? a : T{}; }
#endif
    static inline float hsum(T v) { return (v[0] + v[2]) + (v[1] + v[3]); }
    static inline float hmax(T v) {
        const float a = v[0] > v[2] ? v[0] : v[2], b = v[1] > v[3] ? v[1] : v[3];
        return a > b ? a : b;
    }
};

}  // namespace graft::cpu::simd

// clang does not read `#pragma GCC target`: a clang build (the fuzz preset) has the portable
// copies only, as fused.cpp does.
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__clang__)
#define GRAFT_SIMD_X86 1
#include <immintrin.h>

#define GRAFT_SIMD_AVX2_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma\")")
#define GRAFT_SIMD_AVX2_END _Pragma("GCC pop_options")
// GCC 12 reports the intrinsics' internal _mm512_undefined_ps() as maybe-uninitialized.
#define GRAFT_SIMD_AVX512_BEGIN                                                            \
    _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx2,fma\")")             \
        _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define GRAFT_SIMD_AVX512_END _Pragma("GCC diagnostic pop") _Pragma("GCC pop_options")
// AVX-512 with VNNI (vpdpwssd): the int8 products alone (qgemm_avx512.cpp). _mm512_cvtepi32_ps's
// _mm512_undefined_ps() trips -Wuninitialized as well.
#define GRAFT_SIMD_AVX512VNNI_BEGIN                                                                    \
    _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma\")") \
        _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")     \
            _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define GRAFT_SIMD_AVX512VNNI_END GRAFT_SIMD_AVX512_END
// AVX-512 with BF16 (vdpbf16ps, vcvtne2ps2bf16): the bf16 products alone (bgemm_avx512.cpp).
#define GRAFT_SIMD_AVX512BF16_BEGIN                                                                    \
    _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma\")") \
        _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define GRAFT_SIMD_AVX512BF16_END GRAFT_SIMD_AVX512_END
#define GRAFT_SIMD_SELECT(isa, if_generic, if_avx2, if_avx512)                                        \
    ((isa) == ::graft::cpu::gemm::Isa::avx512 ? (if_avx512)                                          \
                                              : (isa) == ::graft::cpu::gemm::Isa::avx2 ? (if_avx2) : (if_generic))

GRAFT_SIMD_AVX2_BEGIN
namespace graft::cpu::simd {
struct Avx2 {
    using T = __m256;
    static constexpr int W = 8;
    static inline T load(const float* p) { return _mm256_loadu_ps(p); }
    static inline void store(float* p, T v) { _mm256_storeu_ps(p, v); }
    static inline T set1(float v) { return _mm256_set1_ps(v); }
    static inline T bcast(const float* p) { return _mm256_broadcast_ss(p); }
    static inline T zero() { return _mm256_setzero_ps(); }
    static inline T add(T a, T b) { return _mm256_add_ps(a, b); }
    static inline T sub(T a, T b) { return _mm256_sub_ps(a, b); }
    static inline T mul(T a, T b) { return _mm256_mul_ps(a, b); }
    static inline T div(T a, T b) { return _mm256_div_ps(a, b); }
    static inline T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
    static inline T fnma(T a, T b, T c) { return _mm256_fnmadd_ps(a, b, c); }
    static inline T max(T a, T b) { return _mm256_max_ps(a, b); }
    static inline T min(T a, T b) { return _mm256_min_ps(a, b); }
    static inline T max0(T a) { return _mm256_max_ps(a, _mm256_setzero_ps()); }
    static inline float hsum(T v) {
        __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
    }
    static inline float hmax(T v) {
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
    }
};
}  // namespace graft::cpu::simd
GRAFT_SIMD_AVX2_END

GRAFT_SIMD_AVX512_BEGIN
namespace graft::cpu::simd {
struct Avx512 {
    using T = __m512;
    static constexpr int W = 16;
    static inline T load(const float* p) { return _mm512_loadu_ps(p); }
    static inline void store(float* p, T v) { _mm512_storeu_ps(p, v); }
    static inline T set1(float v) { return _mm512_set1_ps(v); }
    static inline T bcast(const float* p) { return _mm512_set1_ps(*p); }
    static inline T zero() { return _mm512_setzero_ps(); }
    static inline T add(T a, T b) { return _mm512_add_ps(a, b); }
    static inline T sub(T a, T b) { return _mm512_sub_ps(a, b); }
    static inline T mul(T a, T b) { return _mm512_mul_ps(a, b); }
    static inline T div(T a, T b) { return _mm512_div_ps(a, b); }
    static inline T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
    static inline T fnma(T a, T b, T c) { return _mm512_fnmadd_ps(a, b, c); }
    static inline T max(T a, T b) { return _mm512_max_ps(a, b); }
    static inline T min(T a, T b) { return _mm512_min_ps(a, b); }
    static inline T max0(T a) { return _mm512_max_ps(a, _mm512_setzero_ps()); }
    static inline float hsum(T v) { return _mm512_reduce_add_ps(v); }
    static inline float hmax(T v) { return _mm512_reduce_max_ps(v); }
};
}  // namespace graft::cpu::simd
GRAFT_SIMD_AVX512_END
#else
#define GRAFT_SIMD_SELECT(isa, if_generic, if_avx2, if_avx512) ((void)(isa), (if_generic))
#endif
