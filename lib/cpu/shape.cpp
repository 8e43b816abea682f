// Transpose and Pad over a thread pool: graft_rt's kernels (which the generated code runs too)
// on blocks of the output's outermost axis of size > 1, one block per thread. Each block is a
// contiguous run of the output and reads the matching block of the input.
#include <algorithm>

#include "cpu/kernels.hpp"
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

}  // namespace

void transpose(const float* x, float* y, const i64* in_shape, const int* perm, int rank, ThreadPool* pool) {
    i64 out[graft_rt::max_rank], xstride[graft_rt::max_rank], s = 1;
    for (int i = rank - 1; i >= 0; --i) {
        xstride[i] = s;
        s *= in_shape[i];
    }
    for (int i = 0; i < rank; ++i) out[i] = in_shape[perm[i]];
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
