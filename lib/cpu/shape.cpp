// Transpose and Pad over a thread pool: graft_rt's kernels (which the generated code runs too)
// on blocks of the output's outermost axis of size > 1, one block per thread. Each block is a
// contiguous run of the output and reads the matching block of the input. On AVX-512, images of
// 3 channels go from NCHW to NHWC through a vector interleave of their own.
#include <algorithm>

#include "cpu/gemm/gemm.hpp"
#include "cpu/kernels.hpp"
#include "cpu/simd.hpp"
#include "cpu/threadpool.hpp"
#include "graft_rt/shape.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;
constexpr i64 kMinFloats = 1 << 15;  // output floats per task, at least (128 KB)

/// The output axis to split (the first of size > 1: every axis before it is 1, so a range of
/// it is a contiguous run of the output), or `rank` when there is none; `inner`: the output
/// floats per entry of it, `total`: all of them.
int split_axis(const i64* out, int rank, i64& inner, i64& total) {
    int axis = 0;
    while (axis < rank && out[axis] == 1) ++axis;
    inner = 1;
    for (int i = axis + 1; i < rank; ++i) inner *= out[i];
    total = axis < rank ? out[axis] * inner : 1;
    return axis;
}

#ifdef GRAFT_SIMD_X86
/// The permutations of sh_avx512::interleave3: output vector o, lane e holds float 16 o + e of 16
/// pixels' (r, g, b), pixel p = (16 o + e) / 3, channel (16 o + e) % 3. `rg` takes r[p] or g[p]
/// (16 + p) from the r and g vectors; `b` then keeps lane e or takes b[p] (16 + p).
struct Interleave3 {
    int rg[3][16], b[3][16];
};
constexpr Interleave3 interleave3_lanes() {
    Interleave3 t{};
    for (int o = 0; o < 3; ++o)
        for (int e = 0; e < 16; ++e) {
            const int j = 16 * o + e, p = j / 3, c = j % 3;
            t.rg[o][e] = c == 1 ? 16 + p : p;
            t.b[o][e] = c == 2 ? 16 + p : e;
        }
    return t;
}
alignas(64) constexpr Interleave3 kInterleave3 = interleave3_lanes();
#endif

}  // namespace

#ifdef GRAFT_SIMD_X86
GRAFT_SIMD_AVX512_BEGIN
namespace sh_avx512 {
/// y[i, c] = x[c * stride + i] for i < n, c < 3: an image's three planes into pixels, 16 pixels
/// (three vectors of output) with two permutes each, where graft_rt's portable loop moves a float
/// at a time. Torch's MobileNet v2 input at batch 1 (224 x 224 x 3, Zen 4): 0.080 -> 0.043 ms.
void interleave3(const float* x, i64 stride, float* y, i64 n) {
    __m512i rg[3], b[3];
    for (int o = 0; o < 3; ++o) {
        rg[o] = _mm512_load_si512(kInterleave3.rg[o]);
        b[o] = _mm512_load_si512(kInterleave3.b[o]);
    }
    i64 i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 vr = _mm512_loadu_ps(x + i), vg = _mm512_loadu_ps(x + stride + i);
        const __m512 vb = _mm512_loadu_ps(x + 2 * stride + i);
        for (int o = 0; o < 3; ++o) {
            const __m512 two = _mm512_permutex2var_ps(vr, rg[o], vg);
            _mm512_storeu_ps(y + 3 * i + 16 * o, _mm512_permutex2var_ps(two, b[o], vb));
        }
    }
    for (; i < n; ++i)
        for (int c = 0; c < 3; ++c) y[3 * i + c] = x[c * stride + i];
}
}  // namespace sh_avx512
GRAFT_SIMD_AVX512_END
#endif

void transpose(const float* x, float* y, const i64* in_shape, const int* perm, int rank, ThreadPool* pool) {
    i64 out[graft_rt::max_rank], xstride[graft_rt::max_rank], s = 1;
    for (int i = rank - 1; i >= 0; --i) {
        xstride[i] = s;
        s *= in_shape[i];
    }
    for (int i = 0; i < rank; ++i) out[i] = in_shape[perm[i]];
#ifdef GRAFT_SIMD_X86
    // NCHW images of 3 channels to NHWC (an image model's input): ranges of pixels.
    if (rank == 4 && perm[0] == 0 && perm[1] == 2 && perm[2] == 3 && perm[3] == 1 && in_shape[1] == 3 &&
        gemm::active_isa() == gemm::Isa::avx512) {
        const i64 hw = in_shape[2] * in_shape[3], pixels = in_shape[0] * hw;
        parallel_ranges(pool, pixels, 3 * pixels, kMinFloats, [&](i64 a, i64 b) {
            for (i64 p = a; p < b;) {
                const i64 image = p / hw, at = p % hw, count = std::min(b - p, hw - at);
                sh_avx512::interleave3(x + image * 3 * hw + at, hw, y + 3 * p, count);
                p += count;
            }
        });
        return;
    }
#endif
    i64 inner = 1, total = 1;
    const int axis = split_axis(out, rank, inner, total);
    if (axis == rank) {
        graft_rt::transpose_strided(x, y, in_shape, xstride, perm, rank);
        return;
    }
    const int from = perm[axis];  // the input axis the split axis reads
    parallel_ranges(pool, out[axis], total, kMinFloats, [&](i64 a, i64 b) {
        i64 shape[graft_rt::max_rank];
        std::copy(in_shape, in_shape + rank, shape);
        shape[from] = b - a;
        graft_rt::transpose_strided(x + a * xstride[from], y + a * inner, shape, xstride, perm, rank);
    });
}

void pad_nd(const float* x, float* y, const i64* in_shape, const i64* out_shape, const i64* begin, int rank, int mode,
            float value, ThreadPool* pool) {
    i64 inner = 1, total = 1;
    const int axis = split_axis(out_shape, rank, inner, total);
    if (axis == rank) {
        graft_rt::pad_nd(x, y, in_shape, out_shape, begin, rank, mode, value);
        return;
    }
    parallel_ranges(pool, out_shape[axis], total, kMinFloats, [&](i64 a, i64 b) {
        // Output entries [a, b) of the axis: the same input, shifted by a more.
        i64 out[graft_rt::max_rank], shift[graft_rt::max_rank];
        std::copy(out_shape, out_shape + rank, out);
        std::copy(begin, begin + rank, shift);
        out[axis] = b - a;
        shift[axis] = begin[axis] - a;
        graft_rt::pad_nd(x, y + a * inner, in_shape, out, shift, rank, mode, value);
    });
}

}  // namespace graft::cpu
