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

/// The blocks to split an output of `out` (rank dims) into: the axis (the first of size > 1,
/// every axis before it being 1) and the count; 1 block when not worth a split.
std::pair<int, i64> blocks(const i64* out, int rank, ThreadPool* pool) {
    i64 total = 1;
    for (int i = 0; i < rank; ++i) total *= out[i];
    int axis = 0;
    while (axis < rank && out[axis] == 1) ++axis;
    if (axis == rank || total <= 0) return {0, 1};
    const i64 n = std::min<i64>({pool_size(pool), out[axis], total / kMinFloats});
    return {axis, std::max<i64>(n, 1)};
}

}  // namespace

void transpose(const float* x, float* y, const i64* in_shape, const int* perm, int rank, ThreadPool* pool) {
    i64 out[graft_rt::max_rank], xstride[graft_rt::max_rank], s = 1;
    for (int i = rank - 1; i >= 0; --i) {
        xstride[i] = s;
        s *= in_shape[i];
    }
    for (int i = 0; i < rank; ++i) out[i] = in_shape[perm[i]];
    const auto split = blocks(out, rank, pool);  // not a structured binding: lambdas capture it (C++17)
    const int axis = split.first;
    const i64 n = split.second;
    if (n <= 1) {
        graft_rt::transpose_strided(x, y, in_shape, xstride, perm, rank);
        return;
    }
    i64 inner = 1;  // output floats per entry of the split axis
    for (int i = axis + 1; i < rank; ++i) inner *= out[i];
    const int from = perm[axis];  // the input axis the split axis reads
    parallel_for(pool, n, [&](i64 t) {
        const i64 a = t * out[axis] / n, b = (t + 1) * out[axis] / n;
        i64 shape[graft_rt::max_rank];
        std::copy(in_shape, in_shape + rank, shape);
        shape[from] = b - a;
        graft_rt::transpose_strided(x + a * xstride[from], y + a * inner, shape, xstride, perm, rank);
    });
}

void pad_nd(const float* x, float* y, const i64* in_shape, const i64* out_shape, const i64* begin, int rank, int mode,
            float value, ThreadPool* pool) {
    const auto split = blocks(out_shape, rank, pool);
    const int axis = split.first;
    const i64 n = split.second;
    if (n <= 1) {
        graft_rt::pad_nd(x, y, in_shape, out_shape, begin, rank, mode, value);
        return;
    }
    i64 inner = 1;
    for (int i = axis + 1; i < rank; ++i) inner *= out_shape[i];
    parallel_for(pool, n, [&](i64 t) {
        // Output entries [a, b) of the axis: the same input, shifted by a more.
        const i64 a = t * out_shape[axis] / n, b = (t + 1) * out_shape[axis] / n;
        i64 out[graft_rt::max_rank], shift[graft_rt::max_rank];
        std::copy(out_shape, out_shape + rank, out);
        std::copy(begin, begin + rank, shift);
        out[axis] = b - a;
        shift[axis] = begin[axis] - a;
        graft_rt::pad_nd(x, y + a * inner, in_shape, out, shift, rank, mode, value);
    });
}

}  // namespace graft::cpu
