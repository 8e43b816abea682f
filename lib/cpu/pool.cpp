// 2-D pooling over NHWC (max / average; TF/Keras: average divides by the in-range taps), the
// vectorized twin of graft_rt::pool_ndhwc (which runs 3-D pooling and the generated code):
// pool_impl.inc compiled for AVX-512, AVX2 and portable GCC vectors, chosen by active_isa(),
// output rows split over a pool. (GCC's own 16-float vectors, used here before, compiled to
// scalar maxss with spills on AVX2: ResNet-18's 3x3 max pooling took 2.2 ms of 27 at batch 1.)
#include <algorithm>

#include "cpu/gemm/gemm.hpp"
#include "cpu/kernels.hpp"
#include "cpu/simd.hpp"
#include "cpu/threadpool.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;

namespace pool_generic {
using V = simd::Vec4;
#include "cpu/pool_impl.inc"
}  // namespace pool_generic

#ifdef GRAFT_SIMD_X86
GRAFT_SIMD_AVX2_BEGIN
namespace pool_avx2 {
using V = simd::Avx2;
#include "cpu/pool_impl.inc"
}  // namespace pool_avx2
GRAFT_SIMD_AVX2_END

GRAFT_SIMD_AVX512_BEGIN
namespace pool_avx512 {
using V = simd::Avx512;
#include "cpu/pool_impl.inc"
}  // namespace pool_avx512
GRAFT_SIMD_AVX512_END
#endif

using Rows = void (*)(const PoolParams&, const float*, float*, bool, i64, i64);

Rows rows_kernel() {
    return GRAFT_SIMD_SELECT(gemm::active_isa(), &pool_generic::pool_rows, &pool_avx2::pool_rows,
                             &pool_avx512::pool_rows);
}

constexpr i64 kRowsMinWork = 1 << 15;  // taps x channels per task, at least

}  // namespace

void pool2d_nhwc(const float* x, float* y, const PoolParams& p, bool is_max, ThreadPool* pool) {
    const Rows run = rows_kernel();
    const i64 rows = p.n * p.oh;
    parallel_ranges(pool, rows, rows * p.ow * p.c * p.kh * p.kw, kRowsMinWork,
                    [&](i64 r0, i64 r1) { run(p, x, y, is_max, r0, r1); });
}

}  // namespace graft::cpu
