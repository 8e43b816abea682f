// GEMM micro-kernels for AVX2 + FMA (8 floats per register; tiles up to 6 x 16).
// Compiled with target attributes, so the rest of the library needs no -mavx2 / -march flag.
#include "backend/native/gemm/ukernel.hpp"
#include "backend/native/simd.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace graft::native::gemm {
namespace {

using V = simd::Avx2;

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
