// graft_rt/elementwise.hpp - per-channel affine maps, merges of same-shaped inputs and PReLU.
#pragma once

#include "graft_rt/core.hpp"

namespace graft_rt {

/// y = x * scale[c] + shift[c], x viewed as [outer, channels, inner]; scale or shift may be null
/// (1 or 0). x and y may be the same memory.
inline void channel_affine(const float* x, const float* scale, const float* shift, float* y, i64 outer, i64 channels,
                           i64 inner) {
    if (inner == 1) {  // channels last: the inner loop runs over channels
        for (i64 o = 0; o < outer; ++o) {
            const float* xo = x + o * channels;
            float* yo = y + o * channels;
            if (scale && shift)
                for (i64 c = 0; c < channels; ++c) yo[c] = xo[c] * scale[c] + shift[c];
            else
                for (i64 c = 0; c < channels; ++c) yo[c] = xo[c] * (scale ? scale[c] : 1.f) + (shift ? shift[c] : 0.f);
        }
        return;
    }
    for (i64 o = 0; o < outer; ++o)
        for (i64 c = 0; c < channels; ++c) {
            const float s = scale ? scale[c] : 1.f, t = shift ? shift[c] : 0.f;
            const float* xc = x + (o * channels + c) * inner;
            float* yc = y + (o * channels + c) * inner;
            for (i64 i = 0; i < inner; ++i) yc[i] = xc[i] * s + t;
        }
}

/// How a merge combines its inputs (avg: their sum divided by their count).
enum class MergeOp : int { add, sub, mul, avg, max, min };

/// The name of a merge in graft's IR ("add"), or null for a value outside the enum.
inline const char* merge_name(MergeOp op) {
    switch (op) {
        case MergeOp::add: return "add";
        case MergeOp::sub: return "sub";
        case MergeOp::mul: return "mul";
        case MergeOp::avg: return "avg";
        case MergeOp::max: return "max";
        case MergeOp::min: return "min";
    }
    return nullptr;
}

/// y = xs[0] (op) xs[1] (op) ... (op) xs[n-1], elementwise over `size` values; sub takes exactly
/// two inputs, one input is copied. y may be the memory of xs[0]: each element is read before it
/// is written.
inline void merge(MergeOp op, const float* const* xs, int n, float* y, i64 size) {
    if (n <= 0 || size <= 0) return;
    if (n == 1) {
        copy(xs[0], y, size);
        return;
    }
    if (op == MergeOp::sub) {
        for (i64 i = 0; i < size; ++i) y[i] = xs[0][i] - xs[1][i];
        return;
    }
    const float* a = xs[0];
    for (int k = 1; k < n; ++k, a = y) {
        const float* b = xs[k];
        switch (op) {
            case MergeOp::add:
            case MergeOp::avg: for (i64 i = 0; i < size; ++i) y[i] = a[i] + b[i]; break;
            case MergeOp::mul: for (i64 i = 0; i < size; ++i) y[i] = a[i] * b[i]; break;
            case MergeOp::max: for (i64 i = 0; i < size; ++i) y[i] = b[i] > a[i] ? b[i] : a[i]; break;
            case MergeOp::min: for (i64 i = 0; i < size; ++i) y[i] = b[i] < a[i] ? b[i] : a[i]; break;
            case MergeOp::sub: break;
        }
    }
    if (op == MergeOp::avg) {
        const float count = static_cast<float>(n);
        for (i64 i = 0; i < size; ++i) y[i] /= count;
    }
}

/// y = a (op) b: merge() of two inputs. y may be the memory of a.
inline void merge2(MergeOp op, const float* a, const float* b, float* y, i64 size) {
    const float* const xs[2] = {a, b};
    merge(op, xs, 2, y, size);
}

/// x [N, K]: y = x < 0 ? alpha[k] * x : x. x and y may be the same memory.
inline void prelu(const float* x, const float* alpha, float* y, i64 N, i64 K) {
    for (i64 n = 0; n < N; ++n)
        for (i64 k = 0; k < K; ++k) {
            const float v = x[n * K + k];
            y[n * K + k] = v < 0.f ? alpha[k] * v : v;
        }
}

}  // namespace graft_rt
