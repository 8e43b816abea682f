// graft_rt/resize.hpp - resizing along any axes of a tensor in any memory order: ONNX Resize
// (nearest, n-linear and cubic sampling; every coordinate transformation mode of opsets 10 to
// 18), of which Keras' UpSampling (nearest, integer factors) and bilinear resize (TF 1 / TF 2
// sampling) are special cases.
//
// Every resized axis gets a table: for each output position, the source indices and weights of
// its taps (1 nearest, 2 linear, 4 cubic), or "extrapolate" (tf_crop_and_resize outside the
// input). Tables are computed in double, as ONNX's reference does, on every run (they are small:
// the sum of the resized lengths), so scales read from an input when the model runs need nothing
// else. Nearest sampling then gathers straight into y, copying a block already written when two
// output positions share a source; linear and cubic sampling are separable and run one pass per
// resized axis (the most shrinking first) through the work buffer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "graft_rt/core.hpp"
#include "graft_rt/shape.hpp"

namespace graft_rt {

enum class ResizeMode : int { nearest, linear, cubic };
enum class ResizeCoord : int { half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize };
/// How nearest sampling rounds a source coordinate. `simple` is ONNX Resize-10 / Upsample's
/// (which has no nearest_mode): floor along an axis scaled up, ceil along one scaled down.
enum class ResizeRound : int { round_prefer_floor, round_prefer_ceil, floor, ceil, simple };

inline const char* resize_mode_name(ResizeMode m) {
    switch (m) {
        case ResizeMode::nearest: return "nearest";
        case ResizeMode::linear: return "linear";
        case ResizeMode::cubic: return "cubic";
    }
    return nullptr;
}
inline const char* resize_coord_name(ResizeCoord c) {
    switch (c) {
        case ResizeCoord::half_pixel: return "half_pixel";
        case ResizeCoord::pytorch_half_pixel: return "pytorch_half_pixel";
        case ResizeCoord::align_corners: return "align_corners";
        case ResizeCoord::asymmetric: return "asymmetric";
        case ResizeCoord::tf_half_pixel_for_nn: return "tf_half_pixel_for_nn";
        case ResizeCoord::tf_crop_and_resize: return "tf_crop_and_resize";
    }
    return nullptr;
}
inline const char* resize_round_name(ResizeRound r) {
    switch (r) {
        case ResizeRound::round_prefer_floor: return "round_prefer_floor";
        case ResizeRound::round_prefer_ceil: return "round_prefer_ceil";
        case ResizeRound::floor: return "floor";
        case ResizeRound::ceil: return "ceil";
        case ResizeRound::simple: return "simple";
    }
    return nullptr;
}

struct ResizeParams {
    ResizeMode mode;
    ResizeCoord coord;
    ResizeRound round;    ///< nearest only
    float cubic_a;        ///< cubic only (ONNX's default -0.75)
    bool exclude_outside; ///< linear, cubic: taps outside the input weigh 0, the others renormalized
    float extrapolation;  ///< tf_crop_and_resize: the value outside the input
};

/// One axis of x, in memory order.
struct ResizeAxis {
    i64 in, out;
    bool resized;      ///< false: y's index along it is x's (in == out)
    float scale;       ///< > 0: the scale ONNX's scales gave; 0: sizes gave `out` (scale out / in)
    i64 scale_index;   ///< >= 0: the scale is scales[scale_index], read when the kernel runs
    float roi_start, roi_end;  ///< tf_crop_and_resize's region, in [0, 1] of the input
};

inline int resize_taps(ResizeMode m) { return m == ResizeMode::nearest ? 1 : m == ResizeMode::linear ? 2 : 4; }

/// Floats of one axis's table: `out` extrapolate flags, then `out * taps` source indices (as
/// floats: exact, lengths are below 2^24) and as many weights.
inline i64 resize_table_floats(const ResizeParams& p, i64 out) { return out * (1 + 2 * resize_taps(p.mode)); }

/// The source coordinate of output position o (ONNX's coordinate_transformation_mode). `length`
/// is the output length before flooring: scale * in when scales are given, else out (the
/// reference's output_width, which align_corners and tf_crop_and_resize divide by).
inline double resize_source(const ResizeParams& p, const ResizeAxis& a, double scale, double length, i64 o) {
    const double x = static_cast<double>(o), in1 = static_cast<double>(a.in - 1);
    switch (p.coord) {
        case ResizeCoord::half_pixel: return (x + 0.5) / scale - 0.5;
        case ResizeCoord::pytorch_half_pixel: return a.out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
        case ResizeCoord::align_corners: return length == 1 ? 0.0 : x * in1 / (length - 1);
        case ResizeCoord::asymmetric: return x / scale;
        case ResizeCoord::tf_half_pixel_for_nn: return (x + 0.5) / scale;
        case ResizeCoord::tf_crop_and_resize: {
            const double r0 = a.roi_start, r1 = a.roi_end;
            return length == 1 ? (r1 - r0) * in1 / 2 + r0 * in1 : x * (r1 - r0) * in1 / (length - 1) + r0 * in1;
        }
    }
    return 0;
}

/// The cubic convolution kernel (Keys) at distance d, coefficient a.
inline double resize_cubic(double d, double a) {
    d = std::fabs(d);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0;
}

/// Fills the table of axis `a` (resize_table_floats of it). False when a scale read at run time
/// is not one that gives the axis's output length (not finite, not positive, or floor(scale * in)
/// != out).
inline bool resize_table(const ResizeParams& p, const ResizeAxis& a, const float* scales, float* table) {
    double scale = a.scale, length = static_cast<double>(a.out);
    if (a.scale_index >= 0) scale = scales[a.scale_index];
    if (a.scale_index >= 0 || a.scale > 0) {
        length = scale * static_cast<double>(a.in);
        if (!(scale > 0) || !std::isfinite(length) || std::floor(length) != static_cast<double>(a.out)) return false;
    } else {
        scale = static_cast<double>(a.out) / static_cast<double>(a.in);
    }
    const int taps = resize_taps(p.mode);
    float* ext = table;
    float* idx = table + a.out;
    float* w = idx + a.out * taps;
    const double hi = static_cast<double>(a.in - 1);
    for (i64 o = 0; o < a.out; ++o) {
        double x = resize_source(p, a, scale, length, o);
        if (!std::isfinite(x)) x = 0;
        ext[o] = p.coord == ResizeCoord::tf_crop_and_resize && (x < 0 || x > hi) ? 1.f : 0.f;
        x = std::min(std::max(x, -4.0), hi + 4);  // taps past the clamped ends change nothing
        const double f = std::floor(x), t = x - f;
        double wt[4] = {1, 0, 0, 0}, first = f;
        if (p.mode == ResizeMode::nearest) {
            bool up = false;
            switch (p.round) {
                case ResizeRound::round_prefer_floor: up = t > 0.5; break;
                case ResizeRound::round_prefer_ceil: up = t >= 0.5; break;
                case ResizeRound::floor: break;
                case ResizeRound::ceil: up = t > 0; break;
                case ResizeRound::simple: up = scale < 1 && t > 0; break;
            }
            first = up ? f + 1 : f;
        } else if (p.mode == ResizeMode::linear) {
            wt[0] = 1 - t, wt[1] = t;
        } else {
            first = f - 1;
            const double c = p.cubic_a;
            wt[0] = resize_cubic(1 + t, c), wt[1] = resize_cubic(t, c), wt[2] = resize_cubic(1 - t, c), wt[3] = resize_cubic(2 - t, c);
        }
        if (p.exclude_outside && p.mode != ResizeMode::nearest) {
            double sum = 0;
            for (int k = 0; k < taps; ++k) {
                if (first + k < 0 || first + k > hi) wt[k] = 0;
                sum += wt[k];
            }
            if (sum != 0)
                for (int k = 0; k < taps; ++k) wt[k] /= sum;
        }
        for (int k = 0; k < taps; ++k) {
            idx[o * taps + k] = static_cast<float>(std::min(std::max(first + k, 0.0), hi));
            w[o * taps + k] = static_cast<float>(wt[k]);
        }
    }
    return true;
}

/// Whether a table maps every output position to the same input position (in == out).
inline bool resize_identity(const ResizeParams& p, const ResizeAxis& a, const float* table) {
    if (a.in != a.out) return false;
    const int taps = resize_taps(p.mode);
    const float* idx = table + a.out;
    const float* w = idx + a.out * taps;
    for (i64 o = 0; o < a.out; ++o) {
        if (table[o] != 0) return false;
        for (int k = 0; k < taps; ++k) {
            const float wk = w[o * taps + k];
            if (wk != 0 && (wk != 1 || static_cast<i64>(idx[o * taps + k]) != o)) return false;
        }
    }
    return true;
}

/// The resized axes in the order the separable passes take them: the most shrinking (out / in)
/// first, so that intermediates stay small; ties in memory order. Returns how many.
inline int resize_pass_order(const ResizeAxis* ax, int rank, int* order) {
    int n = 0;
    for (int i = 0; i < rank; ++i)
        if (ax[i].resized) order[n++] = i;
    std::stable_sort(order, order + n, [&](int a, int b) { return ax[a].out * ax[b].in < ax[b].out * ax[a].in; });
    return n;
}

/// Floats of the intermediate buffers of the separable passes (0 for nearest sampling): two
/// buffers, each the largest intermediate, when there are three passes or more; one for two.
inline i64 resize_buffer_floats(const ResizeParams& p, const ResizeAxis* ax, int rank) {
    if (p.mode == ResizeMode::nearest) return 0;
    int order[max_rank];
    const int n = resize_pass_order(ax, rank, order);
    i64 shape[max_rank], largest = 0;
    for (int i = 0; i < rank; ++i) shape[i] = ax[i].in;
    for (int k = 0; k + 1 < n; ++k) {
        shape[order[k]] = ax[order[k]].out;
        i64 size = 1;
        for (int i = 0; i < rank; ++i) size *= shape[i];
        largest = std::max(largest, size);
    }
    return n >= 3 ? 2 * largest : n == 2 ? largest : 0;
}

/// Floats of the work buffer resize() takes.
inline i64 resize_work_floats(const ResizeParams& p, const ResizeAxis* ax, int rank) {
    i64 n = 0;
    for (int i = 0; i < rank; ++i)
        if (ax[i].resized) n += resize_table_floats(p, ax[i].out);
    return n + resize_buffer_floats(p, ax, rank);
}

/// y = x resampled along one axis: x [outer, len, inner] -> y [outer, out, inner] with `taps`
/// taps per output position (table as resize_table fills it).
inline void resize_pass(const float* x, float* y, i64 outer, i64 len, i64 out, i64 inner, int taps, const float* table, float e) {
    const float* ext = table;
    const float* idx = table + out;
    const float* w = idx + out * taps;
    for (i64 o = 0; o < outer; ++o) {
        const float* xo = x + o * len * inner;
        float* yo = y + o * out * inner;
        for (i64 j = 0; j < out; ++j) {
            float* yj = yo + j * inner;
            if (ext[j] != 0) {
                std::fill(yj, yj + inner, e);
                continue;
            }
            const float* ij = idx + j * taps;
            const float* wj = w + j * taps;
            if (taps == 2) {
                const float* a = xo + static_cast<i64>(ij[0]) * inner;
                const float* b = xo + static_cast<i64>(ij[1]) * inner;
                const float wa = wj[0], wb = wj[1];
                for (i64 k = 0; k < inner; ++k) yj[k] = wa * a[k] + wb * b[k];
            } else {
                const float* a = xo + static_cast<i64>(ij[0]) * inner;
                const float* b = xo + static_cast<i64>(ij[1]) * inner;
                const float* c = xo + static_cast<i64>(ij[2]) * inner;
                const float* d = xo + static_cast<i64>(ij[3]) * inner;
                const float wa = wj[0], wb = wj[1], wc = wj[2], wd = wj[3];
                for (i64 k = 0; k < inner; ++k) yj[k] = wa * a[k] + wb * b[k] + wc * c[k] + wd * d[k];
            }
        }
    }
}

/// What nearest sampling's recursion over the axes reads.
struct ResizeGather {
    const float* table[max_rank];  ///< null along an axis not resized
    i64 out[max_rank], in_stride[max_rank], out_stride[max_rank];
    int last;  ///< the last resized axis: the ones after it are copied as one block
    bool crop;  ///< tf_crop_and_resize: some positions may be extrapolated
    float e;
};

inline void resize_copy(const float* x, float* y, i64 n) {
    if (n < 16) {
        for (i64 k = 0; k < n; ++k) y[k] = x[k];
    } else {
        std::memcpy(y, x, bytes(n));
    }
}

/// Nearest sampling from axis `a` on.
inline void resize_gather(const float* x, float* y, const ResizeGather& g, int a) {
    const i64 n = g.out[a], is = g.in_stride[a], os = g.out_stride[a];
    const float* ext = g.table[a];
    const float* idx = ext ? ext + n : nullptr;
    if (a == g.last) {  // resized (else a later axis would be last): copy blocks of os
        for (i64 j = 0; j < n; ++j) {
            float* yj = y + j * os;
            if (g.crop && ext[j] != 0) std::fill(yj, yj + os, g.e);
            else resize_copy(x + static_cast<i64>(idx[j]) * is, yj, os);
        }
        return;
    }
    for (i64 j = 0; j < n; ++j) {
        float* yj = y + j * os;
        if (ext && ext[j] != 0) {
            std::fill(yj, yj + os, g.e);
        } else if (idx && j > 0 && idx[j] == idx[j - 1] && ext[j - 1] == 0) {
            std::memcpy(yj, yj - os, bytes(os));  // the same source as the block before
        } else {
            resize_gather(x + (idx ? static_cast<i64>(idx[j]) : j) * is, yj, g, a + 1);
        }
    }
}

/// y = x resized (ResizeAxis per axis of x in memory order, rank <= max_rank). `scales`: the
/// scales input when some axis reads its scale at run time, else null. work:
/// resize_work_floats floats. A scale read at run time that does not give the output length
/// makes y NaN (the lengths were fixed when the program was built).
inline void resize(const float* x, float* y, const ResizeAxis* ax, int rank, const ResizeParams& p, const float* scales, float* work) {
    i64 total_in = 1, total_out = 1;
    for (int i = 0; i < rank; ++i) total_in *= ax[i].in, total_out *= ax[i].out;
    if (total_out <= 0) return;
    const float* table[max_rank] = {};
    float* next = work;
    for (int i = 0; i < rank; ++i) {
        if (!ax[i].resized) continue;
        if (!resize_table(p, ax[i], scales, next)) {
            std::fill(y, y + total_out, std::numeric_limits<float>::quiet_NaN());
            return;
        }
        if (!resize_identity(p, ax[i], next)) table[i] = next;
        next += resize_table_floats(p, ax[i].out);
    }
    if (p.mode == ResizeMode::nearest) {
        ResizeGather g;
        g.last = -1;
        g.crop = p.coord == ResizeCoord::tf_crop_and_resize;
        g.e = p.extrapolation;
        i64 is = 1, os = 1;
        for (int i = rank - 1; i >= 0; --i) {
            g.table[i] = table[i];
            g.out[i] = ax[i].out;
            g.in_stride[i] = is, g.out_stride[i] = os;
            is *= ax[i].in, os *= ax[i].out;
            if (table[i] && g.last < 0) g.last = i;
        }
        if (g.last < 0) return copy(x, y, total_in);
        resize_gather(x, y, g, 0);
        return;
    }
    int order[max_rank];
    const int n = resize_pass_order(ax, rank, order);
    int passes[max_rank], m = 0;
    for (int k = 0; k < n; ++k)
        if (table[order[k]]) passes[m++] = order[k];
    if (m == 0) return copy(x, y, total_in);
    const i64 half = resize_buffer_floats(p, ax, rank) / 2;
    i64 shape[max_rank];
    for (int i = 0; i < rank; ++i) shape[i] = ax[i].in;
    const float* src = x;
    for (int k = 0; k < m; ++k) {
        const int a = passes[k];
        i64 outer = 1, inner = 1;
        for (int i = 0; i < a; ++i) outer *= shape[i];
        for (int i = a + 1; i < rank; ++i) inner *= shape[i];
        float* dst = k + 1 == m ? y : next + (k % 2) * (m >= 3 ? half : 0);
        resize_pass(src, dst, outer, shape[a], ax[a].out, inner, resize_taps(p.mode), table[a], p.extrapolation);
        shape[a] = ax[a].out;
        src = dst;
    }
}

}  // namespace graft_rt
