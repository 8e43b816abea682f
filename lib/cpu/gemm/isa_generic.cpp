// Portable GEMM micro-kernels (4-float GCC vectors: SSE2 on x86-64, NEON on arm64, scalar
// elsewhere); the fallback when the CPU has neither AVX2 nor AVX-512.
#include "cpu/gemm/ukernel.hpp"
#include "cpu/simd.hpp"

namespace graft::cpu::gemm {
namespace {

using V = simd::Vec4;
struct H : V {  // no half-panel tiles here
    static inline T low(V::T v) { return v; }
};

#include "cpu/gemm/ukernel_impl.inc"

//                       rows: 0  1  2  3  4
constexpr int kPref[kMaxRows + 1] = {1, 2, 1, 1, 1};

}  // namespace

// Tiles of up to 4 rows (16 accumulators of 4 floats), or 2 in WebAssembly: V8 keeps a v128 in one
// of x86-64's 16 vector registers, and a 4 x 16 tile (16 accumulators, 4 B vectors and the
// broadcast A value) spills. Measured in Chromium 156 on the bench models at 1 thread: mlp b32
// 1.31 ms at 2 rows against 1.42-1.56 at 4 (and 1.97 at 3), lstm b32 11.6 ms against 12.5-14.2.
#if defined(__wasm_simd128__)
constexpr int kRows = 2;
#else
constexpr int kRows = 4;
#endif

const IsaKernels* generic_kernels() {
    static const IsaKernels k = make_table<kRows>("generic", kPref);
    return &k;
}

}  // namespace graft::cpu::gemm
