// GEMM micro-kernels for AVX-512F (16 floats per register; tiles up to 8 x 32).
// Compiled with target attributes, so the rest of the library needs no -mavx512f / -march flag.
#include "backend/native/gemm/ukernel.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
// GCC 12 reports the intrinsics' internal _mm512_undefined_ps() as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace graft::native::gemm {
namespace {

struct V {
    using T = __m512;
    static constexpr int W = 16;
    static inline T load(const float* p) { return _mm512_loadu_ps(p); }
    static inline void store(float* p, T v) { _mm512_storeu_ps(p, v); }
    static inline T bcast(const float* p) { return _mm512_set1_ps(*p); }
    static inline T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
    static inline T add(T a, T b) { return _mm512_add_ps(a, b); }
    static inline T zero() { return _mm512_setzero_ps(); }
    static inline T max0(T a) { return _mm512_max_ps(a, _mm512_setzero_ps()); }
};

#include "backend/native/gemm/ukernel_impl.inc"

//                       rows: 0  1  2  3  4  5  6  7  8
constexpr int kPref[kMaxRows + 1] = {1, 4, 4, 4, 4, 2, 2, 2, 2};

}  // namespace

const IsaKernels* avx512_kernels() {
    static const IsaKernels k = make_table<8>("avx512", kPref);
    return &k;
}

}  // namespace graft::native::gemm

#pragma GCC pop_options

#else
namespace graft::native::gemm {
const IsaKernels* avx512_kernels() { return nullptr; }
}  // namespace graft::native::gemm
#endif
