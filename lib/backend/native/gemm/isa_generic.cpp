// Portable GEMM micro-kernels (4-float GCC vectors: SSE2 on x86-64, NEON on arm64, scalar
// elsewhere); the fallback when the CPU has neither AVX2 nor AVX-512.
#include "backend/native/gemm/ukernel.hpp"

namespace graft::native::gemm {
namespace {

struct V {
    typedef float T __attribute__((vector_size(16)));
    static constexpr int W = 4;
    static inline T load(const float* p) { T v; __builtin_memcpy(&v, p, sizeof v); return v; }
    static inline void store(float* p, T v) { __builtin_memcpy(p, &v, sizeof v); }
    static inline T bcast(const float* p) { return T{} + *p; }
    static inline T fma(T a, T b, T c) { return a * b + c; }
    static inline T add(T a, T b) { return a + b; }
    static inline T zero() { return T{}; }
    static inline T max0(T a) { return a > T{} ? a : T{}; }
};

#include "backend/native/gemm/ukernel_impl.inc"

//                       rows: 0  1  2  3  4
constexpr int kPref[kMaxRows + 1] = {1, 2, 1, 1, 1};

}  // namespace

const IsaKernels* generic_kernels() {
    static const IsaKernels k = make_table<4>("generic", kPref);
    return &k;
}

}  // namespace graft::native::gemm
