// graft_rt/binary.hpp - y = a (op) b with numpy broadcasting over named axes (and y = x
// broadcast to a shape, the same walk with one operand): the output is
// walked in its memory order, each input read through its own strides (0 along an axis it lacks
// or has once). Axes of size 1 are dropped and axes adjacent in all three fused first, so equal
// layouts become one flat loop and a scalar input a loop over the other alone.
#pragma once

#include <cmath>

#include "graft_rt/core.hpp"

namespace graft_rt {

/// The most axes binary() takes.
constexpr int binary_max_rank = 8;

/// The operation: mod is Python's (the result has the divisor's sign), fmod C's (the dividend's).
/// Comparisons and logic give 1 or 0 (bool values held as floats); logic counts a value != 0 as true.
enum class BinaryOp : int { add, sub, mul, div, pow, max, min, mod, fmod, equal, less, greater, less_equal, greater_equal, and_, or_, xor_ };

/// The name of an operation in graft's IR ("add"; fmod is "mod" with the attribute fmod), or null.
inline const char* binary_name(BinaryOp op) {
    switch (op) {
        case BinaryOp::add: return "add";
        case BinaryOp::sub: return "sub";
        case BinaryOp::mul: return "mul";
        case BinaryOp::div: return "div";
        case BinaryOp::pow: return "pow";
        case BinaryOp::max: return "max";
        case BinaryOp::min: return "min";
        case BinaryOp::mod: return "mod";
        case BinaryOp::fmod: return "fmod";
        case BinaryOp::equal: return "equal";
        case BinaryOp::less: return "less";
        case BinaryOp::greater: return "greater";
        case BinaryOp::less_equal: return "less_equal";
        case BinaryOp::greater_equal: return "greater_equal";
        case BinaryOp::and_: return "and";
        case BinaryOp::or_: return "or";
        case BinaryOp::xor_: return "xor";
    }
    return nullptr;
}

/// a mod b with the sign of b (Python's %, ONNX Mod with fmod = 0).
inline float python_mod(float a, float b) {
    const float r = std::fmod(a, b);
    return (r != 0.f && ((r < 0.f) != (b < 0.f))) ? r + b : r;
}

/// The inner loop: n outputs, the inputs advancing by sa and sb (0 or 1 take the fast paths).
template <class F>
inline void binary_run(F f, const float* a, i64 sa, const float* b, i64 sb, float* y, i64 n) {
    if (sa == 1 && sb == 1) {
        for (i64 i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
    } else if (sa == 1 && sb == 0) {
        const float v = b[0];
        for (i64 i = 0; i < n; ++i) y[i] = f(a[i], v);
    } else if (sa == 0 && sb == 1) {
        const float v = a[0];
        for (i64 i = 0; i < n; ++i) y[i] = f(v, b[i]);
    } else {
        for (i64 i = 0; i < n; ++i) y[i] = f(a[i * sa], b[i * sb]);
    }
}

/// y (contiguous, `shape` in its memory order) = f(a, b), a and b read at strides `as` / `bs` per
/// axis of y (0: broadcast). Dimensions are already fused (binary() does it).
template <class F>
inline void binary_walk(F f, const float* a, const float* b, float* y, const i64* shape, const i64* as, const i64* bs,
                        int rank) {
    const i64 n = shape[rank - 1], sa = as[rank - 1], sb = bs[rank - 1];
    const int q = rank - 1;  // outer axes, walked as an odometer
    i64 idx[binary_max_rank] = {0, 0, 0, 0, 0, 0, 0, 0};
    i64 ao = 0, bo = 0;
    for (float* yo = y;; yo += n) {
        binary_run(f, a + ao, sa, b + bo, sb, yo, n);
        if (!next_position(q, shape, idx, ao, as, bo, bs)) return;
    }
}

/// Drops the size-1 axes of `shape` and fuses neighbours whose strides chain in a, b and y alike,
/// into d, sa, sb; returns how many axes are left (at least one), 0 when y is empty.
inline int binary_fuse(const i64* shape, const i64* as, const i64* bs, int rank, i64* d, i64* sa, i64* sb) {
    int q = 0;
    for (int i = 0; i < rank; ++i) {
        if (shape[i] <= 0) return 0;  // nothing to compute
        if (shape[i] == 1) continue;
        if (q > 0 && sa[q - 1] == as[i] * shape[i] && sb[q - 1] == bs[i] * shape[i]) {
            d[q - 1] *= shape[i];
            sa[q - 1] = as[i];
            sb[q - 1] = bs[i];
        } else {
            d[q] = shape[i];
            sa[q] = as[i];
            sb[q] = bs[i];
            ++q;
        }
    }
    if (q == 0) d[0] = 1, sa[0] = sb[0] = 0, q = 1;  // one element
    return q;
}

/// y = a (op) b. y has `shape` (rank <= binary_max_rank axes, row-major in its memory order); a
/// and b are read at strides `as` and `bs` along each axis of y, 0 where an input broadcasts.
/// y must not be the memory of a or b unless that input has y's shape and layout.
inline void binary(BinaryOp op, const float* a, const float* b, float* y, const i64* shape, const i64* as, const i64* bs,
                   int rank) {
    i64 d[binary_max_rank], sa[binary_max_rank], sb[binary_max_rank];
    const int q = binary_fuse(shape, as, bs, rank, d, sa, sb);
    if (q == 0) return;
    switch (op) {
        case BinaryOp::add: binary_walk([](float u, float v) { return u + v; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::sub: binary_walk([](float u, float v) { return u - v; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::mul: binary_walk([](float u, float v) { return u * v; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::div: binary_walk([](float u, float v) { return u / v; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::pow: binary_walk([](float u, float v) { return std::pow(u, v); }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::max: binary_walk([](float u, float v) { return v > u ? v : u; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::min: binary_walk([](float u, float v) { return v < u ? v : u; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::mod: binary_walk([](float u, float v) { return python_mod(u, v); }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::fmod: binary_walk([](float u, float v) { return std::fmod(u, v); }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::equal: binary_walk([](float u, float v) { return u == v ? 1.f : 0.f; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::less: binary_walk([](float u, float v) { return u < v ? 1.f : 0.f; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::greater: binary_walk([](float u, float v) { return u > v ? 1.f : 0.f; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::less_equal: binary_walk([](float u, float v) { return u <= v ? 1.f : 0.f; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::greater_equal: binary_walk([](float u, float v) { return u >= v ? 1.f : 0.f; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::and_: binary_walk([](float u, float v) { return u != 0.f && v != 0.f ? 1.f : 0.f; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::or_: binary_walk([](float u, float v) { return u != 0.f || v != 0.f ? 1.f : 0.f; }, a, b, y, d, sa, sb, q); return;
        case BinaryOp::xor_: binary_walk([](float u, float v) { return (u != 0.f) != (v != 0.f) ? 1.f : 0.f; }, a, b, y, d, sa, sb, q); return;
    }
}

/// y = x broadcast (numpy's broadcast_to): y has `shape` (rank <= binary_max_rank axes, row-major
/// in its memory order), x is read at strides `xs` along each axis of y, 0 where x broadcasts.
inline void broadcast_to(const float* x, float* y, const i64* shape, const i64* xs, int rank) {
    const i64 zero[binary_max_rank] = {0, 0, 0, 0, 0, 0, 0, 0};
    i64 d[binary_max_rank], sx[binary_max_rank], unused[binary_max_rank];
    const int q = binary_fuse(shape, xs, zero, rank, d, sx, unused);
    if (q == 0) return;
    binary_walk([](float u, float) { return u; }, x, x, y, d, sx, unused, q);
}

}  // namespace graft_rt
