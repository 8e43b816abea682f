// Conformance examples of the resize family: ONNX Resize (every mode, coordinate transformation and
// rounding, scales or sizes, roi, scales read when the model runs), Keras' Upsample and
// ResizeBilinear, and GridSample (every mode and padding, both corner conventions). The Resize reference follows ONNX's definition (Operators.md and its reference
// implementation): per output position and resized axis, the source coordinate, the coefficients
// of its `ratio`, and the nearest indices of the edge-padded input; the taps of every axis
// multiplied together (not separably).
#include <algorithm>
#include <cmath>

#include "reference.hpp"

namespace conformance {

namespace {

using i64 = std::int64_t;

/// TF bilinear resize of NHWC by integer factors (half_pixel: TF 2 centres; else TF 1 corners).
double bilinear(const Operand& x, const Pos& p, i64 fh, i64 fw, bool half_pixel) {
    const i64 H = x.shape[1], W = x.shape[2];
    auto src = [&](i64 d, i64 f, i64 n) {
        double c = half_pixel ? (d + 0.5) / f - 0.5 : static_cast<double>(d) / f;
        return std::clamp(c, 0.0, static_cast<double>(n - 1));
    };
    const double sh = src(p.at("H"), fh, H), sw = src(p.at("W"), fw, W);
    const auto h0 = static_cast<i64>(std::floor(sh)), w0 = static_cast<i64>(std::floor(sw));
    const i64 h1 = std::min(h0 + 1, H - 1), w1 = std::min(w0 + 1, W - 1);
    auto v = [&](i64 h, i64 w) {
        Pos q = p;
        q["H"] = h, q["W"] = w;
        return at(x, q);
    };
    const double dh = sh - h0, dw = sw - w0;
    return (v(h0, w0) * (1 - dw) + v(h0, w1) * dw) * (1 - dh) + (v(h1, w0) * (1 - dw) + v(h1, w1) * dw) * dh;
}

/// A Resize's attributes but its axes.
struct Spec {
    std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
    double cubic_a = -0.75;
    bool exclude_outside = false;
    double extrapolation = 0;
};

/// One resized axis: its output length and the scale given (0: sizes given), roi.
struct AxisSpec {
    Axis axis;
    i64 out;
    float scale = 0;
    double roi_start = 0, roi_end = 1;
};

/// Where output position o of one axis samples: extrapolated, or indices (possibly outside the
/// input: the edge-padded input's) and coefficients.
struct Taps {
    bool extrapolate = false;
    std::vector<i64> idx;
    std::vector<double> coef;
};

/// The cubic convolution coefficients (Keys, coefficient A) of the 4 taps around a point
/// `ratio` (in (0, 1]) past the second.
std::vector<double> cubic_coeffs(double r, double A) {
    auto k = [A](double d) {
        d = std::fabs(d);
        return d <= 1 ? (A + 2) * d * d * d - (A + 3) * d * d + 1 : d < 2 ? A * d * d * d - 5 * A * d * d + 8 * A * d - 4 * A : 0.0;
    };
    return {k(1 + r), k(r), k(1 - r), k(2 - r)};
}

Taps taps_of(const Spec& s, const AxisSpec& a, i64 in, i64 o) {
    const double scale = a.scale > 0 ? a.scale : static_cast<double>(a.out) / in;
    const double width = a.scale > 0 ? a.scale * static_cast<double>(in) : static_cast<double>(a.out);  // before flooring
    const double x = static_cast<double>(o);
    double src = 0;
    if (s.coord == "half_pixel") src = (x + 0.5) / scale - 0.5;
    else if (s.coord == "pytorch_half_pixel") src = a.out > 1 ? (x + 0.5) / scale - 0.5 : 0;
    else if (s.coord == "align_corners") src = width == 1 ? 0 : x * (in - 1) / (width - 1);
    else if (s.coord == "asymmetric") src = x / scale;
    else if (s.coord == "tf_half_pixel_for_nn") src = (x + 0.5) / scale;
    else if (s.coord == "tf_crop_and_resize")
        src = (width == 1 ? (a.roi_end - a.roi_start) * (in - 1) / 2 : x * (a.roi_end - a.roi_start) * (in - 1) / (width - 1)) +
              a.roi_start * (in - 1);
    Taps t;
    if (s.coord == "tf_crop_and_resize" && (src < 0 || src > in - 1)) {
        t.extrapolate = true;
        return t;
    }
    const double fl = std::floor(src);
    const bool integer = src == fl;
    const double r = integer ? 1 : src - fl;  // in (0, 1]: the left neighbour is preferred
    if (s.mode == "nearest") {
        std::string m = s.nearest;
        if (m == "simple") m = scale < 1 ? "ceil" : "floor";
        if (integer) t.coef = {0, 1};
        else if (m == "round_prefer_floor") t.coef = {r <= 0.5 ? 1.0 : 0.0, r > 0.5 ? 1.0 : 0.0};
        else if (m == "round_prefer_ceil") t.coef = {r < 0.5 ? 1.0 : 0.0, r >= 0.5 ? 1.0 : 0.0};
        else if (m == "floor") t.coef = {1, 0};
        else t.coef = {0, 1};
    } else if (s.mode == "linear") {
        t.coef = {1 - r, r};
    } else {
        t.coef = cubic_coeffs(r, s.cubic_a);
    }
    // The n indices nearest to src (ties to the smaller), among those of the input padded by
    // ceil(n / 2) on each side.
    const i64 n = static_cast<i64>(t.coef.size()), pad = (n + 1) / 2;
    std::vector<i64> cand;
    for (i64 i = -pad; i < in + pad; ++i) cand.push_back(i);
    std::stable_sort(cand.begin(), cand.end(), [&](i64 a, i64 b) { return std::fabs(src - a) < std::fabs(src - b); });
    t.idx.assign(cand.begin(), cand.begin() + n);
    std::sort(t.idx.begin(), t.idx.end());
    if (s.exclude_outside) {
        double sum = 0;
        for (i64 k = 0; k < n; ++k) {
            if (t.idx[k] < 0 || t.idx[k] >= in) t.coef[k] = 0;
            sum += t.coef[k];
        }
        for (auto& c : t.coef) c /= sum;
    }
    return t;
}

/// A Resize example of x [order, shape] along `axes`; with `runtime`, the scales are an input
/// (in ONNX's positional order of `order`) read when the model runs.
Example resize(const std::string& name, Order order, Shape shape, Spec s, std::vector<AxisSpec> axes, unsigned seed, bool runtime = false) {
    Example e;
    e.op_type = "Resize";
    e.name = name;
    std::vector<Axis> names;
    std::vector<i64> sizes, index;
    std::vector<double> scales, roi_start, roi_end;
    for (std::size_t i = 0; i < axes.size(); ++i) {
        names.push_back(axes[i].axis);
        sizes.push_back(axes[i].out);
        scales.push_back(axes[i].scale);
        roi_start.push_back(axes[i].roi_start), roi_end.push_back(axes[i].roi_end);
        index.push_back(static_cast<i64>(order.index(axes[i].axis)));
    }
    e.attrs.set("axes", Order(names));
    e.attrs.set("sizes", sizes);
    e.attrs.set("mode", s.mode);
    e.attrs.set("coordinate_transformation_mode", s.coord);
    e.attrs.set("nearest_mode", s.nearest);
    e.attrs.set("cubic_coeff_a", s.cubic_a);
    e.attrs.set("exclude_outside", s.exclude_outside);
    e.attrs.set("extrapolation_value", s.extrapolation);
    if (s.coord == "tf_crop_and_resize") {
        roi_start.insert(roi_start.end(), roi_end.begin(), roi_end.end());
        e.attrs.set("roi", roi_start);
    }
    e.inputs = {input("x", order, shape, seed)};
    if (runtime) {
        e.attrs.set("scale_index", index);
        Operand sc{"scales", OrderC, {static_cast<i64>(order.ndim())}, false, std::vector<float>(order.ndim(), 1.f)};
        for (std::size_t i = 0; i < axes.size(); ++i) sc.data[static_cast<std::size_t>(index[i])] = axes[i].scale;
        e.inputs.push_back(sc);
    } else if (axes[0].scale > 0) {
        e.attrs.set("scales", scales);
    }
    e.reference = [=](const std::vector<Operand>& in) {
        const Operand& x = in[0];
        Shape out_shape = x.shape;
        for (const auto& a : axes) out_shape[x.order.index(a.axis)] = a.out;
        return std::vector<Expected>{output("y", x.order, out_shape, [&](const Pos& p, i64) {
            std::vector<Taps> taps;
            for (const auto& a : axes) {
                taps.push_back(taps_of(s, a, x.shape[x.order.index(a.axis)], p.at(a.axis.name())));
                if (taps.back().extrapolate) return s.extrapolation;
            }
            double acc = 0;
            std::vector<std::size_t> k(axes.size(), 0);  // every combination of the axes' taps
            for (;;) {
                Pos q = p;
                double w = 1;
                for (std::size_t i = 0; i < axes.size(); ++i) {
                    const i64 len = x.shape[x.order.index(axes[i].axis)];
                    q[axes[i].axis.name()] = std::clamp<i64>(taps[i].idx[k[i]], 0, len - 1);  // edge padding
                    w *= taps[i].coef[k[i]];
                }
                acc += w * at(x, q);
                std::size_t i = axes.size();
                while (i-- > 0 && ++k[i] == taps[i].idx.size()) k[i] = 0;
                if (i == static_cast<std::size_t>(-1)) break;
            }
            return acc;
        })};
    };
    return e;
}

/// GridSample's source coordinate along an axis of `len` and the pixel a tap index reads, from
/// ONNX's definition (Operators.md, opset 16): reflection written as a fold modulo twice the
/// span, not as the kernel's repeated reflection.
struct GridAxis {
    i64 len;
    bool align;
    std::string padding;
    double lo() const { return align ? 0.0 : -0.5; }
    double hi() const { return align ? static_cast<double>(len - 1) : static_cast<double>(len) - 0.5; }
    double fold(double v) const {
        const double span = hi() - lo();
        if (span <= 0) return lo();
        double t = std::fmod(v - lo(), 2 * span);
        if (t < 0) t += 2 * span;
        return t <= span ? lo() + t : lo() + 2 * span - t;
    }
    double source(double g, bool nearest) const {
        const double L = static_cast<double>(len);
        double v = align ? (g + 1) / 2 * (L - 1) : ((g + 1) * L - 1) / 2;
        if (nearest) v = std::nearbyint(v);
        if (v < lo() || v > hi()) {
            if (padding == "border") v = std::clamp(v, 0.0, L - 1);
            if (padding == "reflection") v = fold(v);
        }
        return v;
    }
    /// The index tap `i` reads, or -1 for a zero.
    i64 read(i64 i) const {
        if (i >= 0 && i < len) return i;
        if (padding == "zeros") return -1;
        if (padding == "border") return std::clamp<i64>(i, 0, len - 1);
        return std::clamp<i64>(static_cast<i64>(fold(static_cast<double>(i))), 0, len - 1);
    }
};

/// The taps (index read, weight) of source coordinate `v`.
std::vector<std::pair<i64, double>> grid_taps(const GridAxis& a, double v, const std::string& mode) {
    if (mode == "nearest") return {{a.read(static_cast<i64>(v)), 1.0}};
    const auto base = static_cast<i64>(std::floor(v));
    std::vector<std::pair<i64, double>> t;
    if (mode == "bilinear") {
        for (i64 i = base; i <= base + 1; ++i) t.emplace_back(a.read(i), std::max(0.0, 1 - std::fabs(v - static_cast<double>(i))));
        return t;
    }
    for (i64 i = base - 1; i <= base + 2; ++i) {  // Keys' cubic convolution, a = -0.75
        const double d = std::fabs(v - static_cast<double>(i)), A = -0.75;
        t.emplace_back(a.read(i), d <= 1 ? (A + 2) * d * d * d - (A + 3) * d * d + 1 : A * d * d * d - 5 * A * d * d + 8 * A * d - 4 * A);
    }
    return t;
}

Example grid_sample(const std::string& mode, const std::string& padding, bool align, Shape xs, i64 ho, i64 wo, unsigned seed) {
    Example e;
    e.op_type = "GridSample";
    e.name = mode + ", " + padding + " padding" + (align ? ", align_corners" : "");
    e.attrs.set("mode", mode);
    e.attrs.set("padding_mode", padding);
    e.attrs.set("align_corners", align);
    // Grid values in [-1.6, 1.6): some points fall outside the image, to exercise the padding.
    Operand grid = input("grid", OrderNHWC, {xs[0], ho, wo, 2}, seed + 1);
    for (auto& g : grid.data) g *= 0.8f;
    e.inputs = {input("x", graft::OrderNCHW, xs, seed), grid};
    e.reference = [=](const std::vector<Operand>& in) {
        const Operand &x = in[0], &g = in[1];
        const GridAxis ah{x.shape[2], align, padding}, aw{x.shape[3], align, padding};
        return std::vector<Expected>{output("y", graft::OrderNCHW, {xs[0], xs[1], ho, wo}, [&](const Pos& p, i64) {
            Pos q{{"N", p.at("N")}, {"H", p.at("H")}, {"W", p.at("W")}, {"C", 0}};
            const double gx = at(g, q);
            q["C"] = 1;
            const double gy = at(g, q);
            double acc = 0;
            for (const auto& [row, wr] : grid_taps(ah, ah.source(gy, mode == "nearest"), mode))
                for (const auto& [col, wc] : grid_taps(aw, aw.source(gx, mode == "nearest"), mode)) {
                    if (row < 0 || col < 0) continue;
                    Pos r{{"N", p.at("N")}, {"C", p.at("C")}, {"H", row}, {"W", col}};
                    acc += wr * wc * at(x, r);
                }
            return acc;
        })};
    };
    return e;
}

}  // namespace

std::vector<Example> resize_examples() {
    std::vector<Example> v;
    const Order nchw = graft::OrderNCHW, nhwc = OrderNHWC;
    const Axis H = Axis::H, W = Axis::W;
    Seeds seed(400, 7);

    Example up;
    up.op_type = "Upsample";
    up.name = "nearest, H x2, W x3";
    up.attrs.set("axes", graft::Order{H, W});
    up.attrs.set("factors", std::vector<i64>{2, 3});
    up.inputs = {input("x", nhwc, {1, 2, 3, 2}, 37)};
    up.reference = [](const std::vector<Operand>& in) {
        return std::vector<Expected>{output("y", OrderNHWC, {1, 4, 9, 2}, [&](const Pos& p, i64) {
            Pos q = p;
            q["H"] /= 2, q["W"] /= 3;
            return at(in[0], q);
        })};
    };
    v.push_back(up);

    for (bool half : {false, true}) {
        Example rb;
        rb.op_type = "ResizeBilinear";
        rb.name = half ? "half-pixel centres" : "TF 1 corners";
        rb.attrs.set("factors", std::vector<i64>{2, 3});
        rb.attrs.set("half_pixel", half);
        rb.inputs = {input("x", nhwc, {2, 3, 2, 2}, 38)};
        rb.reference = [half](const std::vector<Operand>& in) {
            return std::vector<Expected>{
                output("y", OrderNHWC, {2, 6, 6, 2}, [&](const Pos& p, i64) { return bilinear(in[0], p, 2, 3, half); })};
        };
        v.push_back(rb);
    }

    // nearest: every rounding, ties included (asymmetric x2 lands on halves)
    for (const char* r : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
        Spec s;
        s.coord = "asymmetric", s.nearest = r;
        v.push_back(resize(std::string("nearest ") + r + ", asymmetric, scales x2 and x1.5", nchw, {1, 2, 3, 4}, s,
                           {{H, 6, 2.f}, {W, 6, 1.5f}}, seed()));
    }
    Spec nn;
    v.push_back(resize("nearest, half_pixel, scales 0.6 (down)", nchw, {2, 2, 5, 5}, nn, {{H, 3, 0.6f}, {W, 3, 0.6f}}, seed()));
    nn.coord = "align_corners", nn.nearest = "floor";
    v.push_back(resize("nearest floor, align_corners, sizes", nchw, {1, 2, 4, 4}, nn, {{H, 8}, {W, 7}}, seed()));
    nn.coord = "tf_half_pixel_for_nn", nn.nearest = "round_prefer_ceil";
    v.push_back(resize("nearest, tf_half_pixel_for_nn, sizes", nhwc, {1, 3, 5, 2}, nn, {{H, 7}, {W, 3}}, seed()));
    nn.coord = "asymmetric", nn.nearest = "simple";
    v.push_back(resize("nearest simple (Resize-10), up and down", nchw, {1, 2, 5, 4}, nn, {{H, 3, 0.6f}, {W, 8, 2.f}}, seed()));
    nn.coord = "tf_crop_and_resize", nn.extrapolation = 10;
    v.push_back(resize("nearest, tf_crop_and_resize, extrapolation 10", nchw, {1, 1, 4, 5}, nn,
                       {{H, 3, 0.f, 0.4, 0.6}, {W, 4, 0.f, -0.2, 1.3}}, seed()));

    // linear
    Spec lin;
    lin.mode = "linear";
    v.push_back(resize("linear, half_pixel, scales x2 and x1.5", nhwc, {2, 3, 4, 3}, lin, {{H, 6, 2.f}, {W, 6, 1.5f}}, seed()));
    lin.coord = "align_corners";
    v.push_back(resize("linear, align_corners, scales 0.6 (fractional width)", nchw, {1, 2, 2, 4}, lin, {{H, 1, 0.6f}, {W, 2, 0.6f}}, seed()));
    lin.coord = "pytorch_half_pixel";
    v.push_back(resize("linear, pytorch_half_pixel, sizes, one output row", nchw, {1, 2, 4, 4}, lin, {{H, 3}, {W, 1}}, seed()));
    lin.coord = "asymmetric", lin.exclude_outside = true;
    v.push_back(resize("linear, asymmetric, exclude_outside", nchw, {1, 1, 3, 3}, lin, {{H, 5}, {W, 2}}, seed()));
    lin.coord = "tf_crop_and_resize", lin.exclude_outside = false, lin.extrapolation = -3;
    v.push_back(resize("linear, tf_crop_and_resize, roi past the edges", nhwc, {1, 4, 4, 2}, lin,
                       {{H, 3, 0.f, 0.4, 0.6}, {W, 5, 0.f, -0.3, 1.2}}, seed()));
    lin.coord = "half_pixel";
    v.push_back(resize("linear over D, H, W: up, down, up", graft::OrderNDHWC, {1, 3, 4, 2, 2}, lin,
                       {{Axis::D, 5}, {H, 3}, {W, 3}}, seed()));
    v.push_back(resize("linear along the inner axis C", OrderNC, {3, 5}, lin, {{Axis::C, 8}}, seed()));
    v.push_back(resize("linear, scales read when the model runs", nchw, {1, 2, 4, 4}, lin, {{H, 3, 0.8f}, {W, 6, 1.5f}}, seed(), true));
    Spec nr;
    v.push_back(resize("nearest, scales read when the model runs", nchw, {1, 2, 2, 2}, nr, {{H, 4, 2.f}, {W, 6, 3.f}}, seed(), true));

    // cubic
    Spec cub;
    cub.mode = "cubic";
    v.push_back(resize("cubic, half_pixel, scales x2", nchw, {1, 2, 4, 4}, cub, {{H, 8, 2.f}, {W, 8, 2.f}}, seed()));
    cub.cubic_a = -0.5, cub.exclude_outside = true;
    v.push_back(resize("cubic A -0.5, exclude_outside, scales 0.8", nhwc, {1, 4, 4, 2}, cub, {{H, 3, 0.8f}, {W, 3, 0.8f}}, seed()));
    cub.cubic_a = -0.75, cub.exclude_outside = false, cub.coord = "asymmetric";
    v.push_back(resize("cubic, asymmetric, sizes", nchw, {1, 1, 4, 4}, cub, {{H, 8}, {W, 5}}, seed()));
    cub.coord = "align_corners";
    v.push_back(resize("cubic, align_corners, scales 0.8", nchw, {1, 1, 4, 4}, cub, {{H, 3, 0.8f}, {W, 3, 0.8f}}, seed()));

    v.push_back(grid_sample("bilinear", "zeros", false, {2, 2, 3, 4}, 3, 5, seed()));
    v.push_back(grid_sample("bilinear", "reflection", true, {1, 3, 4, 3}, 4, 4, seed()));
    v.push_back(grid_sample("nearest", "border", true, {2, 1, 4, 5}, 3, 3, seed()));
    v.push_back(grid_sample("nearest", "reflection", false, {1, 2, 3, 3}, 5, 2, seed()));
    v.push_back(grid_sample("bicubic", "reflection", false, {1, 2, 5, 4}, 3, 4, seed()));
    v.push_back(grid_sample("bicubic", "zeros", true, {2, 1, 4, 4}, 2, 3, seed()));
    v.push_back(grid_sample("bicubic", "border", false, {1, 1, 3, 5}, 4, 3, seed()));
    return v;
}

}  // namespace conformance
