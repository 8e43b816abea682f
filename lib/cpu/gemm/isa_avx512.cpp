// GEMM micro-kernels for AVX-512F (16 floats per register; tiles up to 8 x 32).
// Compiled with target attributes, so the rest of the library needs no -mavx512f / -march flag.
#include "cpu/gemm/ukernel.hpp"
#include "cpu/simd.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
// GCC 12 reports the intrinsics' internal _mm512_undefined_ps() as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace graft::cpu::gemm {
namespace {

using V = simd::Avx512;

#include "cpu/gemm/ukernel_impl.inc"

//                       rows: 0  1  2  3  4  5  6  7  8
constexpr int kPref[kMaxRows + 1] = {1, 4, 4, 4, 4, 2, 2, 2, 2};

}  // namespace

const IsaKernels* avx512_kernels() {
    static const IsaKernels k = make_table<8>("avx512", kPref);
    return &k;
}

}  // namespace graft::cpu::gemm

#pragma GCC pop_options

#else
namespace graft::cpu::gemm {
const IsaKernels* avx512_kernels() { return nullptr; }
}  // namespace graft::cpu::gemm
#endif
