// graft_rt/reduce.hpp - reductions over named axes in any memory order (ONNX's Reduce* family),
// the index of the largest / smallest entry along one axis (ArgMax, ArgMin) and its one-hot
// (Hardmax).
//
// reduce() walks y (the kept axes, contiguous) and, for each of its entries, the reduced axes of
// x through their strides; sums accumulate in double. Axes of size 1 are dropped and adjacent
// axes whose strides chain are fused, so reducing the innermost axes of x is one contiguous run
// per output, and reducing outer axes with the innermost one kept accumulates whole rows.
#pragma once

#include <algorithm>
#include <cmath>

#include "graft_rt/core.hpp"

namespace graft_rt {

/// The most kept or reduced axes reduce() takes.
constexpr int reduce_max_rank = 8;

/// l1 = sum |x|, l2 = sqrt(sum x^2), log_sum = log(sum x), log_sum_exp = log(sum e^x).
enum class ReduceKind : int { sum, mean, max, min, prod, l1, l2, sum_square, log_sum, log_sum_exp };

/// The name of a reduction in graft's IR ("sum"), or null for a value outside the enum.
inline const char* reduce_name(ReduceKind k) {
    switch (k) {
        case ReduceKind::sum: return "sum";
        case ReduceKind::mean: return "mean";
        case ReduceKind::max: return "max";
        case ReduceKind::min: return "min";
        case ReduceKind::prod: return "prod";
        case ReduceKind::l1: return "l1";
        case ReduceKind::l2: return "l2";
        case ReduceKind::sum_square: return "sum_square";
        case ReduceKind::log_sum: return "log_sum";
        case ReduceKind::log_sum_exp: return "log_sum_exp";
    }
    return nullptr;
}

/// Drops size-1 axes of (d, s) and fuses neighbours whose strides chain; at least one axis remains
/// (size 1, stride 0). Returns the new count.
inline int reduce_fuse(const i64* d, const i64* s, int n, i64* od, i64* os) {
    int q = 0;
    for (int i = 0; i < n; ++i) {
        if (d[i] == 1) continue;
        if (q > 0 && os[q - 1] == s[i] * d[i]) {
            od[q - 1] *= d[i];
            os[q - 1] = s[i];
        } else {
            od[q] = d[i];
            os[q] = s[i];
            ++q;
        }
    }
    if (q == 0) od[0] = 1, os[0] = 0, q = 1;
    return q;
}

/// Calls f(v) for every entry of x along the axes (d, s), n >= 1 of them.
template <class F>
inline void reduce_visit(const float* x, const i64* d, const i64* s, int n, F& f) {
    const i64 len = d[n - 1], st = s[n - 1];
    i64 idx[reduce_max_rank] = {0, 0, 0, 0, 0, 0, 0, 0};
    i64 o = 0;
    do {
        const float* p = x + o;
        if (st == 1)
            for (i64 i = 0; i < len; ++i) f(p[i]);
        else
            for (i64 i = 0; i < len; ++i) f(p[i * st]);
    } while (next_position(n - 1, d, idx, o, s));
}

/// The reduction of x's entries along the axes (d, s); `count` of them.
inline float reduce_one(ReduceKind k, const float* x, const i64* d, const i64* s, int n, i64 count) {
    double acc = 0.0;
    switch (k) {
        case ReduceKind::max:
        case ReduceKind::min: {
            float m = x[0];
            auto f = [&](float v) { m = (k == ReduceKind::max ? v > m : v < m) ? v : m; };
            reduce_visit(x, d, s, n, f);
            return m;
        }
        case ReduceKind::prod: {
            acc = 1.0;
            auto f = [&](float v) { acc *= v; };
            reduce_visit(x, d, s, n, f);
            return static_cast<float>(acc);
        }
        case ReduceKind::l1: {
            auto f = [&](float v) { acc += std::fabs(static_cast<double>(v)); };
            reduce_visit(x, d, s, n, f);
            return static_cast<float>(acc);
        }
        case ReduceKind::l2:
        case ReduceKind::sum_square: {
            auto f = [&](float v) { acc += static_cast<double>(v) * v; };
            reduce_visit(x, d, s, n, f);
            return static_cast<float>(k == ReduceKind::l2 ? std::sqrt(acc) : acc);
        }
        case ReduceKind::log_sum_exp: {
            float m = x[0];
            auto fm = [&](float v) { m = v > m ? v : m; };
            reduce_visit(x, d, s, n, fm);
            if (!std::isfinite(m)) return m;  // +inf, or every entry -inf, or NaN
            auto f = [&](float v) { acc += std::exp(static_cast<double>(v) - m); };
            reduce_visit(x, d, s, n, f);
            return static_cast<float>(m + std::log(acc));
        }
        case ReduceKind::sum:
        case ReduceKind::mean:
        case ReduceKind::log_sum: break;
    }
    auto f = [&](float v) { acc += v; };
    reduce_visit(x, d, s, n, f);
    if (k == ReduceKind::mean) acc /= static_cast<double>(count);
    if (k == ReduceKind::log_sum) acc = std::log(acc);
    return static_cast<float>(acc);
}

/// y = the reduction of x over some of its axes. y's entries are x's kept axes (sizes kd, strides
/// in x ks, nk >= 1 of them, y contiguous in that order); each reduces x's reduced axes (sizes rd,
/// strides rs, nr >= 1). At most reduce_max_rank of each.
inline void reduce(ReduceKind k, const float* x, float* y, const i64* kd, const i64* ks, int nk, const i64* rd, const i64* rs,
                   int nr) {
    i64 d[reduce_max_rank], s[reduce_max_rank], e[reduce_max_rank], t[reduce_max_rank];
    for (int i = 0; i < nk; ++i)
        if (kd[i] <= 0) return;
    i64 count = 1;
    for (int i = 0; i < nr; ++i) count *= rd[i];
    if (count <= 0) return;
    nk = reduce_fuse(kd, ks, nk, d, s);
    nr = reduce_fuse(rd, rs, nr, e, t);
    const i64 inner = d[nk - 1];
    // The innermost axis of x kept, the reduced ones outside it: accumulate rows of y (in double,
    // a chunk at a time) while x is read in its memory order.
    const bool rows = s[nk - 1] == 1 && inner > 1 && k != ReduceKind::log_sum_exp && k != ReduceKind::prod;
    i64 idx[reduce_max_rank] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (i64 xo = 0, yo = 0;; yo += inner) {
        if (rows) {
            constexpr i64 kChunk = 256;
            double acc[kChunk];
            for (i64 c0 = 0; c0 < inner; c0 += kChunk) {
                const i64 m = std::min(kChunk, inner - c0);
                const float* base = x + xo + c0;
                for (i64 j = 0; j < m; ++j) acc[j] = (k == ReduceKind::max || k == ReduceKind::min) ? base[j] : 0.0;
                // walk the reduced axes by hand: every step reads m contiguous floats
                i64 r[reduce_max_rank] = {0, 0, 0, 0, 0, 0, 0, 0};
                for (i64 po = 0;;) {
                    const float* p = base + po;
                    switch (k) {
                        case ReduceKind::max: for (i64 j = 0; j < m; ++j) acc[j] = p[j] > acc[j] ? p[j] : acc[j]; break;
                        case ReduceKind::min: for (i64 j = 0; j < m; ++j) acc[j] = p[j] < acc[j] ? p[j] : acc[j]; break;
                        case ReduceKind::l1: for (i64 j = 0; j < m; ++j) acc[j] += std::fabs(static_cast<double>(p[j])); break;
                        case ReduceKind::l2:
                        case ReduceKind::sum_square:
                            for (i64 j = 0; j < m; ++j) acc[j] += static_cast<double>(p[j]) * p[j];
                            break;
                        default: for (i64 j = 0; j < m; ++j) acc[j] += p[j]; break;
                    }
                    if (!next_position(nr, e, r, po, t)) break;
                }
                for (i64 j = 0; j < m; ++j) {
                    double v = acc[j];
                    if (k == ReduceKind::mean) v /= static_cast<double>(count);
                    if (k == ReduceKind::l2) v = std::sqrt(v);
                    if (k == ReduceKind::log_sum) v = std::log(v);
                    y[yo + c0 + j] = static_cast<float>(v);
                }
            }
        } else {
            for (i64 j = 0; j < inner; ++j) y[yo + j] = reduce_one(k, x + xo + j * s[nk - 1], e, t, nr, count);
        }
        if (!next_position(nk - 1, d, idx, xo, s)) return;
    }
}

/// The index j < len of the largest (max) or smallest entry p[j * stride], the first one of equals
/// or (last) the last one.
inline i64 arg_at(const float* p, i64 len, i64 stride, bool max, bool last) {
    float best = p[0];
    i64 at = 0;
    for (i64 j = 1; j < len; ++j) {
        const float v = p[j * stride];
        const bool better = max ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
        if (better) best = v, at = j;
    }
    return at;
}

/// x viewed as [outer, len, inner]: y[o, i] = arg_at of x[o, :, i], as a float.
inline void arg_reduce(const float* x, float* y, i64 outer, i64 len, i64 inner, bool max, bool last) {
    for (i64 o = 0; o < outer; ++o)
        for (i64 i = 0; i < inner; ++i) y[o * inner + i] = static_cast<float>(arg_at(x + o * len * inner + i, len, inner, max, last));
}

/// x viewed as [outer, len, inner]: y[o, j, i] = 1 where j is the first largest entry of
/// x[o, :, i], else 0 (ONNX Hardmax). Reads each column before writing it: y may be x.
inline void hardmax(const float* x, float* y, i64 outer, i64 len, i64 inner) {
    for (i64 o = 0; o < outer; ++o)
        for (i64 i = 0; i < inner; ++i) {
            const i64 off = o * len * inner + i, at = arg_at(x + off, len, inner, true, false);
            for (i64 j = 0; j < len; ++j) y[off + j * inner] = j == at ? 1.f : 0.f;
        }
}

/// y[b] = the determinant of the m x m matrix x[b] (row-major, `batch` of them), by LU
/// decomposition with partial pivoting in double. `work` holds m * m doubles.
inline void det(const float* x, float* y, i64 batch, i64 m, double* work) {
    for (i64 b = 0; b < batch; ++b) {
        for (i64 i = 0; i < m * m; ++i) work[i] = static_cast<double>(x[b * m * m + i]);
        double d = 1;
        for (i64 k = 0; k < m && d != 0; ++k) {
            i64 p = k;  // the row of the largest pivot candidate
            for (i64 r = k + 1; r < m; ++r)
                if (std::fabs(work[r * m + k]) > std::fabs(work[p * m + k])) p = r;
            if (work[p * m + k] == 0) {
                d = 0;
                break;
            }
            if (p != k) {
                for (i64 c = 0; c < m; ++c) std::swap(work[p * m + c], work[k * m + c]);
                d = -d;
            }
            const double pivot = work[k * m + k];
            d *= pivot;
            for (i64 r = k + 1; r < m; ++r) {
                const double f = work[r * m + k] / pivot;
                for (i64 c = k + 1; c < m; ++c) work[r * m + c] -= f * work[k * m + c];
            }
        }
        y[b] = static_cast<float>(d);
    }
}

}  // namespace graft_rt
