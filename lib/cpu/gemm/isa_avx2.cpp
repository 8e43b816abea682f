// GEMM micro-kernels for AVX2 + FMA (8 floats per register; tiles up to 6 x 16).
// Compiled with target attributes, so the rest of the library needs no -mavx2 / -march flag.
#include "cpu/gemm/ukernel.hpp"
#include "cpu/simd.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace graft::cpu::gemm {
namespace {

using V = simd::Avx2;

#include "cpu/gemm/ukernel_impl.inc"

//                       rows: 0  1  2  3  4  5  6
constexpr int kPref[kMaxRows + 1] = {1, 4, 2, 2, 1, 1, 1};

}  // namespace

const IsaKernels* avx2_kernels() {
    static const IsaKernels k = make_table<6>("avx2", kPref);
    return &k;
}

}  // namespace graft::cpu::gemm

#pragma GCC pop_options

#else
namespace graft::cpu::gemm {
const IsaKernels* avx2_kernels() { return nullptr; }
}  // namespace graft::cpu::gemm
#endif
