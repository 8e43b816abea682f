// The fused elementwise program: block buffers, then one tight loop per step and block. The
// loops (fused_impl.inc) are compiled for AVX-512, AVX2 and portable code, chosen at run time
// with the GEMM's instruction set (gemm::active_isa), like vmath.cpp.
#include "cpu/fused.hpp"

#include <algorithm>
#include <cstring>

#include "cpu/gemm/gemm.hpp"

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

namespace graft::cpu {
namespace {
using i64 = std::int64_t;
namespace fz_generic {
#include "cpu/fused_impl.inc"
}  // namespace fz_generic
}  // namespace
}  // namespace graft::cpu

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__clang__)
#define GRAFT_FUSED_X86 1
#pragma GCC push_options
#pragma GCC target("avx2")
namespace graft::cpu {
namespace {
using i64 = std::int64_t;
namespace fz_avx2 {
#include "cpu/fused_impl.inc"
}  // namespace fz_avx2
}  // namespace
}  // namespace graft::cpu
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx2")
namespace graft::cpu {
namespace {
using i64 = std::int64_t;
namespace fz_avx512 {
#include "cpu/fused_impl.inc"
}  // namespace fz_avx512
}  // namespace
}  // namespace graft::cpu
#pragma GCC pop_options
#endif

namespace graft::cpu {

int fused_allocate(FusedProgram& p) {
    const int n_in = static_cast<int>(p.inputs.size());
    const int n_steps = static_cast<int>(p.steps.size());
    int next = 0;
    for (auto& in : p.inputs) in.buffer = in.broadcast ? next++ : -1;
    // last use of every step's result
    std::vector<int> last(static_cast<std::size_t>(n_steps), -1);
    for (int s = 0; s < n_steps; ++s)
        for (int v : {p.steps[s].a, p.steps[s].b})
            if (v >= n_in) last[static_cast<std::size_t>(v - n_in)] = s;
    std::vector<int> free_list;
    std::vector<int> holder(static_cast<std::size_t>(n_steps), -1);
    int used = next;
    for (int s = 0; s < n_steps; ++s) {
        FusedStep& st = p.steps[static_cast<std::size_t>(s)];
        if (s == n_steps - 1) {
            st.buffer = -1;
            break;
        }
        // a buffer no value still needed holds, and not this step's operands: an activation
        // kernel vectorizes only when its input and output differ
        if (free_list.empty()) {
            st.buffer = used++;
        } else {
            st.buffer = free_list.back();
            free_list.pop_back();
        }
        holder[static_cast<std::size_t>(s)] = st.buffer;
        // operands whose last use is this step free their buffers for the next steps
        for (int v : {st.a, st.b})
            if (v >= n_in && last[static_cast<std::size_t>(v - n_in)] == s && holder[static_cast<std::size_t>(v - n_in)] >= 0) {
                free_list.push_back(holder[static_cast<std::size_t>(v - n_in)]);
                holder[static_cast<std::size_t>(v - n_in)] = -1;
            }
    }
    p.buffers = used;
    return used;
}

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
