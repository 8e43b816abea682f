// Elementwise activations (Keras semantics), also used as fused epilogues by other kernels:
// sigmoid, tanh and GELU vectorized (vmath.cpp, a few ulp; GELU within 7.5e-8 |x|); relu, clip (relu6) and relu with a max_value
// vectorized here for each instruction set (exact: they only compare); every other one the
// reference kernel.
#include "cpu/gemm/gemm.hpp"
#include "cpu/kernels.hpp"
#include "cpu/simd.hpp"
#include "cpu/vmath.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;

// y = min(hi, max(lo, x)) with NaN kept (as std::min(std::max(v, lo), hi) keeps it); with
// `relu`, max(x, 0) first (NaN becomes 0, as v > 0 ? v : 0 makes it).
#define GRAFT_CLAMP_KERNEL                                                                        \
    inline void clamp(const float* x, float* y, i64 n, float lo, float hi, bool relu) {          \
        const V::T l = V::set1(lo), h = V::set1(hi);                                              \
        i64 i = 0;                                                                                \
        for (; i + V::W <= n; i += V::W) {                                                        \
            V::T v = V::load(x + i);                                                              \
            if (relu) v = V::max0(v);                                                             \
            V::store(y + i, V::min(h, V::max(l, v)));                                             \
        }                                                                                         \
        for (; i < n; ++i) {                                                                      \
            float v = x[i];                                                                       \
            if (relu) v = v > 0.f ? v : 0.f;                                                      \
            v = v < lo ? lo : v;                                                                  \
            y[i] = hi < v ? hi : v;                                                               \
        }                                                                                         \
    }

namespace act_generic {
using V = simd::Vec4;
GRAFT_CLAMP_KERNEL
}  // namespace act_generic

#ifdef GRAFT_SIMD_X86
GRAFT_SIMD_AVX2_BEGIN
namespace act_avx2 {
using V = simd::Avx2;
GRAFT_CLAMP_KERNEL
}  // namespace act_avx2
GRAFT_SIMD_AVX2_END

GRAFT_SIMD_AVX512_BEGIN
namespace act_avx512 {
using V = simd::Avx512;
GRAFT_CLAMP_KERNEL
}  // namespace act_avx512
GRAFT_SIMD_AVX512_END
#endif
#undef GRAFT_CLAMP_KERNEL

void clamp(const float* x, float* y, i64 n, float lo, float hi, bool relu) {
    GRAFT_SIMD_SELECT(gemm::active_isa(), act_generic::clamp, act_avx2::clamp, act_avx512::clamp)(x, y, n, lo, hi, relu);
}

constexpr float kInf = __builtin_huge_valf();

}  // namespace

void activate(const float* x, float* y, std::int64_t n, const ActParams& a) {
    switch (a.kind) {
        case Act::linear: graft_rt::copy(x, y, n); return;
        case Act::sigmoid: vmath::sigmoid(x, y, n); return;
        case Act::tanh: vmath::tanh(x, y, n); return;
        case Act::gelu: vmath::gelu(x, y, n); return;
        case Act::relu: clamp(x, y, n, 0.f, kInf, true); return;
        case Act::clip: clamp(x, y, n, a.alpha, a.max_value, false); return;
        case Act::relu_general:
            if (a.alpha == 0.f && a.threshold == 0.f)  // relu with a max_value (ReLU6): max(x, 0), then min
                return clamp(x, y, n, 0.f, a.max_value >= 0.f ? a.max_value : kInf, true);
            break;
        default: break;
    }
    graft_rt::activation(x, y, n, a);
}

ClampForm clamp_form(const ActParams* a) {
    ClampForm f;
    if (!a || a->kind == Act::linear) return f;
    if (a->kind == Act::relu) {
        f.relu = true;
    } else if (a->kind == Act::clip) {
        f.clamp = true, f.lo = a->alpha, f.hi = a->max_value;
    } else if (a->kind == Act::relu_general && a->alpha == 0.f && a->threshold == 0.f) {
        f.relu = true;
        if (a->max_value >= 0.f) f.clamp = true, f.lo = 0.f, f.hi = a->max_value;
    } else {
        f.other = true;
    }
    return f;
}

}  // namespace graft::cpu
