// GEMM micro-kernels for AVX2 + FMA (8 floats per register; tiles up to 6 x 16).
// Compiled with target attributes, so the rest of the library needs no -mavx2 / -march flag.
#include "cpu/gemm/ukernel.hpp"
#include "cpu/simd.hpp"

#ifdef GRAFT_SIMD_X86
GRAFT_SIMD_AVX2_BEGIN

namespace graft::cpu::gemm {
namespace {

using V = simd::Avx2;
struct H : V {  // no half-panel tiles here: V is half a panel already
    static inline T low(V::T v) { return v; }
};

#include "cpu/gemm/ukernel_impl.inc"

//                       rows: 0  1  2  3  4  5  6
constexpr int kPref[kMaxRows + 1] = {1, 4, 2, 2, 1, 1, 1};

}  // namespace

const IsaKernels* avx2_kernels() {
    static const IsaKernels k = make_table<6>("avx2", kPref);
    return &k;
}

}  // namespace graft::cpu::gemm
GRAFT_SIMD_AVX2_END

#else
namespace graft::cpu::gemm {
const IsaKernels* avx2_kernels() { return nullptr; }
}  // namespace graft::cpu::gemm
#endif
