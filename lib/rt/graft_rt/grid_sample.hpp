// graft_rt/grid_sample.hpp - sampling an image at arbitrary points: ONNX GridSample (opset 16),
// PyTorch's grid_sample. x [N, C, H, W], grid [N, Ho, Wo, 2] holding (x, y) in [-1, 1] (x along W),
// y [N, C, Ho, Wo]; nearest, bilinear or bicubic (Keys, a = -0.75) sampling; outside the image
// zeros, the border's value, or the image reflected.
#pragma once

#include <cmath>

#include "graft_rt/core.hpp"

namespace graft_rt {

enum class GridMode : int { bilinear, nearest, bicubic };
enum class GridPadding : int { zeros, border, reflection };

inline const char* grid_mode_name(GridMode m) {
    switch (m) {
        case GridMode::bilinear: return "bilinear";
        case GridMode::nearest: return "nearest";
        case GridMode::bicubic: return "bicubic";
    }
    return nullptr;
}
inline const char* grid_padding_name(GridPadding p) {
    switch (p) {
        case GridPadding::zeros: return "zeros";
        case GridPadding::border: return "border";
        case GridPadding::reflection: return "reflection";
    }
    return nullptr;
}

struct GridSampleParams {
    GridMode mode;
    GridPadding padding;
    bool align_corners;  ///< -1 and 1 are the centres of the corner pixels (else their outer edges)
};

/// `v` folded into [lo, hi] by reflecting at the bounds as often as it takes.
inline double grid_reflect(double v, double lo, double hi) {
    const double span = hi - lo;
    if (!(span > 0)) return lo;
    if (v >= lo && v <= hi) return v;
    const double d = v < lo ? lo - v : v - hi;
    const double turns = std::floor(d / span), rest = d - turns * span;
    const bool even = std::fmod(turns, 2.0) == 0;
    return (v < lo) == even ? lo + rest : hi - rest;
}

/// Index `i` along an axis of `len` under the padding rule: -1 when the tap reads zeros.
inline i64 grid_tap(i64 i, i64 len, const GridSampleParams& p) {
    if (i >= 0 && i < len) return i;
    if (p.padding == GridPadding::zeros) return -1;
    if (p.padding == GridPadding::border) return i < 0 ? 0 : len - 1;
    const double lo = p.align_corners ? 0.0 : -0.5, hi = p.align_corners ? static_cast<double>(len - 1) : static_cast<double>(len) - 0.5;
    const auto r = static_cast<i64>(grid_reflect(static_cast<double>(i), lo, hi));
    return r < 0 ? 0 : r >= len ? len - 1 : r;
}

/// The source coordinate (in pixels) of the normalized `g` along an axis of `len`, with the
/// border and reflection rules applied to coordinates outside the image (the taps get them again).
inline double grid_source(double g, i64 len, const GridSampleParams& p) {
    const double L = static_cast<double>(len);
    double v = p.align_corners ? (g + 1) / 2 * (L - 1) : ((g + 1) * L - 1) / 2;
    if (p.mode == GridMode::nearest) v = std::nearbyint(v);  // half to even, as numpy's rint
    const double lo = p.align_corners ? 0.0 : -0.5, hi = p.align_corners ? L - 1 : L - 0.5;
    if (v < lo || v > hi) {
        if (p.padding == GridPadding::border) v = v < 0 ? 0 : v > L - 1 ? L - 1 : v;
        else if (p.padding == GridPadding::reflection) v = grid_reflect(v, lo, hi);
    }
    return v;
}

/// Keys' cubic convolution weights of the taps floor(t) - 1 .. floor(t) + 2, t's fraction `f`.
inline void grid_cubic_weights(double f, double w[4]) {
    const double a = -0.75;
    const auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
    const auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
    w[0] = far(f + 1), w[1] = near(f), w[2] = near(1 - f), w[3] = far(2 - f);
}

inline void grid_sample(const float* x, const float* grid, float* y, i64 N, i64 C, i64 H, i64 W, i64 Ho, i64 Wo,
                        const GridSampleParams& p) {
    const i64 plane = H * W, out_plane = Ho * Wo;
    for (i64 n = 0; n < N; ++n) {
        for (i64 o = 0; o < out_plane; ++o) {
            const float* g = grid + (n * out_plane + o) * 2;
            // NaN coordinates sample nothing: every tap reads zero.
            const double sx = grid_source(static_cast<double>(g[0]), W, p), sy = grid_source(static_cast<double>(g[1]), H, p);
            const bool finite = std::isfinite(sx) && std::isfinite(sy) && std::fabs(sx) < 1e15 && std::fabs(sy) < 1e15;
            i64 rows[4] = {-1, -1, -1, -1}, cols[4] = {-1, -1, -1, -1};
            double wy[4] = {0, 0, 0, 0}, wx[4] = {0, 0, 0, 0};
            int taps = 0;
            if (finite) {
                const double fy = std::floor(sy), fx = std::floor(sx);
                const auto iy = static_cast<i64>(fy), ix = static_cast<i64>(fx);
                if (p.mode == GridMode::nearest) {
                    taps = 1;
                    rows[0] = grid_tap(static_cast<i64>(sy), H, p), cols[0] = grid_tap(static_cast<i64>(sx), W, p);
                    wy[0] = wx[0] = 1;
                } else if (p.mode == GridMode::bilinear) {
                    taps = 2;
                    for (int t = 0; t < 2; ++t) rows[t] = grid_tap(iy + t, H, p), cols[t] = grid_tap(ix + t, W, p);
                    wy[0] = 1 - (sy - fy), wy[1] = sy - fy, wx[0] = 1 - (sx - fx), wx[1] = sx - fx;
                } else {
                    taps = 4;
                    for (int t = 0; t < 4; ++t) rows[t] = grid_tap(iy - 1 + t, H, p), cols[t] = grid_tap(ix - 1 + t, W, p);
                    grid_cubic_weights(sy - fy, wy);
                    grid_cubic_weights(sx - fx, wx);
                }
            }
            for (i64 c = 0; c < C; ++c) {
                const float* xc = x + (n * C + c) * plane;
                double acc = 0;
                for (int a = 0; a < taps; ++a) {
                    if (rows[a] < 0) continue;
                    double row = 0;
                    for (int b = 0; b < taps; ++b)
                        if (cols[b] >= 0) row += wx[b] * static_cast<double>(xc[rows[a] * W + cols[b]]);
                    acc += wy[a] * row;
                }
                y[(n * C + c) * out_plane + o] = static_cast<float>(acc);
            }
        }
    }
}

}  // namespace graft_rt
