// GEMM micro-kernels for AVX2 + FMA (8 floats per register; tiles up to 6 x 16).
// Compiled with target attributes, so the rest of the library needs no -mavx2 / -march flag.
#include "backend/native/gemm/ukernel.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace graft::native::gemm {
namespace {

struct V {
    using T = __m256;
    static constexpr int W = 8;
    static inline T load(const float* p) { return _mm256_loadu_ps(p); }
    static inline void store(float* p, T v) { _mm256_storeu_ps(p, v); }
    static inline T bcast(const float* p) { return _mm256_broadcast_ss(p); }
    static inline T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
    static inline T add(T a, T b) { return _mm256_add_ps(a, b); }
    static inline T zero() { return _mm256_setzero_ps(); }
    static inline T max0(T a) { return _mm256_max_ps(a, _mm256_setzero_ps()); }
};

#include "backend/native/gemm/ukernel_impl.inc"

//                       rows: 0  1  2  3  4  5  6
constexpr int kPref[kMaxRows + 1] = {1, 4, 2, 2, 1, 1, 1};

}  // namespace

const IsaKernels* avx2_kernels() {
    static const IsaKernels k = make_table<6>("avx2", kPref);
    return &k;
}

}  // namespace graft::native::gemm

#pragma GCC pop_options

#else
namespace graft::native::gemm {
const IsaKernels* avx2_kernels() { return nullptr; }
}  // namespace graft::native::gemm
#endif
