// GEMM micro-kernels for AVX-512F (16 floats per register; tiles up to 8 x 32).
// Compiled with target attributes, so the rest of the library needs no -mavx512f / -march flag.
#include "cpu/gemm/ukernel.hpp"
#include "cpu/simd.hpp"

#ifdef GRAFT_SIMD_X86
GRAFT_SIMD_AVX512_BEGIN

namespace graft::cpu::gemm {
namespace {

using V = simd::Avx512;
/// The half-panel vector of the 24-column tiles (ukernel_impl.inc's fill_wide).
struct H : simd::Avx2 {
    static inline T low(V::T v) { return _mm512_castps512_ps256(v); }
};

#include "cpu/gemm/ukernel_impl.inc"

//                       rows: 0  1  2  3  4  5  6  7  8
constexpr int kPref[kMaxRows + 1] = {1, 4, 4, 4, 4, 2, 2, 2, 2};

}  // namespace

const IsaKernels* avx512_kernels() {
    static const IsaKernels k = make_table<8>("avx512", kPref);
    return &k;
}

}  // namespace graft::cpu::gemm
GRAFT_SIMD_AVX512_END

#else
namespace graft::cpu::gemm {
const IsaKernels* avx512_kernels() { return nullptr; }
}  // namespace graft::cpu::gemm
#endif
