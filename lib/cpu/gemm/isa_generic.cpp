// Portable GEMM micro-kernels (4-float GCC vectors: SSE2 on x86-64, NEON on arm64, scalar
// elsewhere); the fallback when the CPU has neither AVX2 nor AVX-512.
#include "cpu/gemm/ukernel.hpp"
#include "cpu/simd.hpp"

namespace graft::cpu::gemm {
namespace {

using V = simd::Vec4;

#include "cpu/gemm/ukernel_impl.inc"

//                       rows: 0  1  2  3  4
constexpr int kPref[kMaxRows + 1] = {1, 2, 1, 1, 1};

}  // namespace

const IsaKernels* generic_kernels() {
    static const IsaKernels k = make_table<4>("generic", kPref);
    return &k;
}

}  // namespace graft::cpu::gemm
