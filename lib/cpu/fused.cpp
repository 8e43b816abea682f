// The fused elementwise program, natively: one tight loop per step and block (fused_impl.inc),
// compiled for AVX-512, AVX2 and portable code, chosen at run time with the GEMM's instruction
// set (gemm::active_isa), like vmath.cpp. Block buffers and broadcasts are graft_rt's.
#include "cpu/fused.hpp"

#include <algorithm>

#include "cpu/gemm/gemm.hpp"
#include "cpu/kernels.hpp"

// The step loops (fused_impl.inc) write y[j] after reading a[j] and b[j] only, and y is either
// another buffer or exactly an operand (the op's output written over its input x0), never a
// shifted view: there is no loop-carried dependence, so the compiler may vectorize without alias
// checks (which would fail, and fall back to scalar code, exactly in the in-place case).
#if defined(__clang__)
#define GRAFT_FUSED_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define GRAFT_FUSED_IVDEP _Pragma("GCC ivdep")
#else
#define GRAFT_FUSED_IVDEP
#endif

// The copies are plain C++ the compiler vectorizes, under targets of their own rather than
// simd.hpp's: without FMA, no a * b + c of a step is contracted, so every copy rounds alike.
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__clang__)
#define GRAFT_FUSED_X86 1
#endif

namespace graft::cpu {
namespace {
using i64 = std::int64_t;

namespace fz_generic {
#include "cpu/fused_impl.inc"
}  // namespace fz_generic

#ifdef GRAFT_FUSED_X86
#pragma GCC push_options
#pragma GCC target("avx2")
namespace fz_avx2 {
#include "cpu/fused_impl.inc"
}  // namespace fz_avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx2")
namespace fz_avx512 {
#include "cpu/fused_impl.inc"
}  // namespace fz_avx512
#pragma GCC pop_options
#endif

}  // namespace

void fused_eval(const FusedProgram& p, const float* const* xs, float* y, std::int64_t begin, std::int64_t end) {
#ifdef GRAFT_FUSED_X86
    switch (gemm::active_isa()) {
        case gemm::Isa::avx512: return fz_avx512::eval(p, xs, y, begin, end);
        case gemm::Isa::avx2: return fz_avx2::eval(p, xs, y, begin, end);
        default: break;
    }
#endif
    fz_generic::eval(p, xs, y, begin, end);
}

}  // namespace graft::cpu
