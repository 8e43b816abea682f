// Depthwise convolution (NHWC, depth multiplier 1), the native kernel of DepthwiseConv2D and of
// ONNX's Conv with one group per channel (depthwise_impl.inc, compiled for AVX-512, AVX2+FMA and
// portable GCC vectors, chosen by active_isa()): a 3x3 kernel runs bands of rows one vector of
// channels at a time, its nine weights in registers; other kernels accumulate all taps of a
// vector of channels in registers, pixel by pixel; relu / clip / ReLU6 are applied before the
// store, other activations on each finished row, and a pool splits the output rows.
// graft_rt::depthwise2d_nhwc stays the reference (and the kernel for other multipliers).
#include <algorithm>

#include "cpu/caches.hpp"
#include "cpu/gemm/gemm.hpp"
#include "cpu/kernels.hpp"
#include "cpu/simd.hpp"
#include "cpu/threadpool.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;
using graft_rt::DepthwiseParams;

struct DwArgs {
    const DepthwiseParams* p;
    const float* x;
    const float* w;     // [kh][kw][C]
    const float* bias;  // [C] or null
    float* y;
    const ActParams* act;
    ClampForm f;  // what the kernel applies itself; f.other: activate() on each finished row
    i64 band_rows;  // output rows per band of the 3x3 kernel (dw_band3x3)
};

void finish_row(const DwArgs& g, float* row, i64 n) {
    if (g.f.other) activate(row, row, n, *g.act);
}

namespace dw_generic {
using V = simd::Vec4;
#include "cpu/depthwise_impl.inc"
}  // namespace dw_generic

#ifdef GRAFT_SIMD_X86
GRAFT_SIMD_AVX2_BEGIN
namespace dw_avx2 {
using V = simd::Avx2;
#include "cpu/depthwise_impl.inc"
}  // namespace dw_avx2
GRAFT_SIMD_AVX2_END

GRAFT_SIMD_AVX512_BEGIN
namespace dw_avx512 {
using V = simd::Avx512;
#include "cpu/depthwise_impl.inc"
}  // namespace dw_avx512
GRAFT_SIMD_AVX512_END
#endif

using Rows = void (*)(const DwArgs&, i64, i64);

Rows rows_kernel() { return GRAFT_SIMD_SELECT(gemm::active_isa(), &dw_generic::dw_rows, &dw_avx2::dw_rows, &dw_avx512::dw_rows); }

constexpr i64 kRowsMinWork = 1 << 14;  // multiply-adds per task, at least

}  // namespace

void depthwise2d_nhwc(const float* x, const float* w, const float* bias, float* y, const graft_rt::DepthwiseParams& p,
                      const ActParams& act, ThreadPool* pool) {
    if (p.mult != 1) {
        graft_rt::depthwise2d_nhwc(x, w, bias, y, p, ActivateRows{act});
        return;
    }
    // Bands whose input and output rows take at most a quarter of the L2: each vector of channels
    // of dw_band3x3 then finds the lines its neighbour's pass brought in.
    const i64 row_bytes = (p.stride_h * p.w + p.ow) * p.cin * static_cast<i64>(sizeof(float));
    static const i64 l2 = static_cast<i64>(cache_bytes(2));  // read once (it reads files)
    const i64 band = std::max<i64>(1, l2 / 4 / std::max<i64>(1, row_bytes));
    const DwArgs g{&p, x, w, bias, y, &act, clamp_form(&act), band};
    const Rows run = rows_kernel();
    const i64 rows = p.n * p.oh;
    parallel_ranges(pool, rows, rows * p.ow * p.cin * p.kh * p.kw, kRowsMinWork,
                    [&](i64 r0, i64 r1) { run(g, r0, r1); });
}

}  // namespace graft::cpu
