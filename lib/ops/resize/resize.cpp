// The resize family (resize.hpp): Resize, Upsample and ResizeBilinear read their attributes into a
// ResizePlan; one inference function, kernel builder and emitter serve the three. Both backends
// run graft_rt::resize (graft_rt/resize.hpp).
#include "ops/resize/resize.hpp"

#include <cmath>

#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

using i64 = std::int64_t;

Shape ResizePlan::out_shape() const {
    Shape s;
    for (const auto& a : axes) s.push_back(a.resized ? a.out : a.in);
    return s;
}

namespace {

/// The kernel's lengths are float-exact indices: below 2^24.
constexpr i64 kMaxLength = i64{1} << 24;

/// Every axis of x kept as it is.
ResizePlan identity_plan(const Operator& op, graft_rt::ResizeParams params) {
    const Variable& x = in(op, "x");
    if (x.ndim() == 0) shape_fail(op, "cannot resize the scalar " + x.describe());
    check_rank(op, x.ndim(), graft_rt::max_rank, "resizing");
    ResizePlan p;
    p.params = params;
    for (auto d : x.shape()) p.axes.push_back({d, d, false, 0.f, -1, 0.f, 1.f});
    return p;
}

/// The entry of axis `a` of x, marked resized to `out` entries.
graft_rt::ResizeAxis& resized(const Operator& op, ResizePlan& p, const Axis& a, i64 out) {
    const Variable& x = in(op, "x");
    if (!x.order().has(a)) shape_fail(op, "input " + x.describe() + " has no axis " + a.name());
    if (a == Axis::N) throw UnsupportedError(op.describe() + ": resizing the batch axis N");
    auto& e = p.axes[x.order().index(a)];
    if (out == kDynamic && e.in == kDynamic) {  // a free length: the output's is free too, known per run
        e.out = out;
        e.resized = true;
        return e;
    }
    if (out < 1) shape_fail(op, "output length " + std::to_string(out) + " along " + a.name() + " (expected at least 1)");
    if (e.in >= kMaxLength || out >= kMaxLength)
        throw UnsupportedError(op.describe() + ": resizing " + std::to_string(e.in) + " entries to " + std::to_string(out) +
                               " along " + a.name() + " (graft resizes lengths below 16777216)");
    e.out = out;
    e.resized = true;
    return e;
}

/// The length of axis `a` of x (ShapeError if x has none).
i64 length(const Operator& op, const Axis& a) {
    const Variable& x = in(op, "x");
    if (!x.order().has(a)) shape_fail(op, "input " + x.describe() + " has no axis " + a.name());
    return x.size(a);
}

/// The length of axis `a` of x times an integer factor (ShapeError naming both when the product
/// is beyond kMaxElements).
i64 factor_times(const Operator& op, const Axis& a, i64 factor) {
    checked::in_range(op.describe(), "factor along " + a.name(), factor);
    if (length(op, a) == kDynamic) return kDynamic;  // a free length stays free
    return checked::product(op.describe(), "length along " + a.name() + " times factor", {length(op, a), factor});
}

ResizePlan plan_resize(const Operator& op) {
    using namespace graft_rt;
    ResizeParams params{};
    params.mode = enum_attr(op, "mode", ResizeMode::nearest, resize_mode_name, 3);
    params.coord = enum_attr(op, "coordinate_transformation_mode", ResizeCoord::half_pixel, resize_coord_name, 6);
    params.round = enum_attr(op, "nearest_mode", ResizeRound::round_prefer_floor, resize_round_name, 5);
    params.cubic_a = static_cast<float>(op.attr_or<double>("cubic_coeff_a", -0.75));
    params.exclude_outside = op.attr_or<bool>("exclude_outside", false);
    params.extrapolation = static_cast<float>(op.attr_or<double>("extrapolation_value", 0.0));
    ResizePlan p = identity_plan(op, params);
    const Order axes = op.attrs().get_order("axes", op.describe());
    const auto sizes = op.attr<std::vector<i64>>("sizes");
    const auto scales = op.attr_or<std::vector<double>>("scales", {});
    const auto index = op.attr_or<std::vector<i64>>("scale_index", {});
    const auto roi = op.attr_or<std::vector<double>>("roi", {});
    const std::size_t k = axes.ndim();
    auto expect_size = [&](const char* what, std::size_t n, std::size_t want) {
        if (n != want)
            shape_fail(op, std::string(what) + " has " + std::to_string(n) + " entries, expected " + std::to_string(want) + " (axes " +
                               axes.str() + ")");
    };
    expect_size("sizes", sizes.size(), k);
    if (!scales.empty()) expect_size("scales", scales.size(), k);
    if (!roi.empty()) expect_size("roi", roi.size(), 2 * k);
    i64 runtime_scales = 0;
    if (!index.empty()) {
        expect_size("scale_index", index.size(), k);
        if (!scales.empty()) shape_fail(op, "has both scales and scale_index");
        if (!op.has_input("scales")) shape_fail(op, "has scale_index but no input scales");
        runtime_scales = numel(in(op, "scales").shape());
    } else if (op.has_input("scales")) {
        shape_fail(op, "has an input scales but no scale_index saying which entry is which axis's");
    }
    for (std::size_t i = 0; i < k; ++i) {
        auto& e = resized(op, p, axes[i], sizes[i]);
        if (!scales.empty()) {
            const auto s = static_cast<float>(scales[i]);
            if (!(s > 0) || !std::isfinite(s)) shape_fail(op, "scale " + std::to_string(scales[i]) + " along " + axes[i].name() + " is not positive");
            const double out = std::floor(static_cast<double>(s) * static_cast<double>(e.in));
            if (out != static_cast<double>(sizes[i]))
                shape_fail(op, "scale " + std::to_string(s) + " gives " + std::to_string(out) + " entries along " +
                                   axes[i].name() + ", sizes says " + std::to_string(sizes[i]));
            e.scale = s;
        }
        if (!index.empty()) {
            if (index[i] < 0 || index[i] >= runtime_scales)
                shape_fail(op, "scale_index " + std::to_string(index[i]) + " is outside input scales (" + std::to_string(runtime_scales) +
                                   " entries)");
            e.scale_index = index[i];
        }
        if (!roi.empty()) e.roi_start = static_cast<float>(roi[i]), e.roi_end = static_cast<float>(roi[k + i]);
    }
    return p;
}

/// Upsample: nearest, every entry repeated: asymmetric coordinates, rounded down.
ResizePlan plan_upsample(const Operator& op) {
    using namespace graft_rt;
    ResizePlan p = identity_plan(op, {ResizeMode::nearest, ResizeCoord::asymmetric, ResizeRound::floor, -0.75f, false, 0.f});
    const Order axes = op.attrs().get_order("axes", op.describe());
    const auto factors = op.attr<std::vector<i64>>("factors");
    if (factors.size() != axes.ndim()) shape_fail(op, "factors need one entry per axis of " + axes.str());
    for (std::size_t i = 0; i < axes.ndim(); ++i) {
        if (factors[i] < 1)
            shape_fail(op, "factor " + std::to_string(factors[i]) + " for axis " + axes[i].name() + " must be at least 1");
        resized(op, p, axes[i], factor_times(op, axes[i], factors[i])).scale = static_cast<float>(factors[i]);
    }
    return p;
}
/// ResizeBilinear: H and W by integer factors; TF 2 samples pixel centres (half_pixel), TF 1
/// the corners (asymmetric).
ResizePlan plan_bilinear(const Operator& op) {
    using namespace graft_rt;
    const auto coord = op.attr<bool>("half_pixel") ? ResizeCoord::half_pixel : ResizeCoord::asymmetric;
    ResizePlan p = identity_plan(op, {ResizeMode::linear, coord, ResizeRound::floor, -0.75f, false, 0.f});
    const auto f = op.attr<std::vector<i64>>("factors");
    if (f.size() != 2 || f[0] < 1 || f[1] < 1) shape_fail(op, "factors need 2 entries of at least 1");
    resized(op, p, Axis::H, factor_times(op, Axis::H, f[0])).scale = static_cast<float>(f[0]);
    resized(op, p, Axis::W, factor_times(op, Axis::W, f[1])).scale = static_cast<float>(f[1]);
    return p;
}

Outputs infer_resize(const Operator& op) { return {{"y", {in(op, "x").order(), resize_plan(op).out_shape()}}}; }

std::unique_ptr<native::Kernel> build_resize(native::BuildContext& b) {
    const ResizePlan p = resize_plan(b.op());
    const int rank = static_cast<int>(p.axes.size());
    const auto axes = fixed_array<graft_rt::max_rank>(p.axes);
    const auto params = p.params;
    const auto floats = graft_rt::resize_work_floats(params, axes.data(), rank);
    const auto work = b.workspace(static_cast<std::size_t>(std::max<i64>(floats, 1)));
    const auto scales = optional_in(b, "scales");
    const auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::resize(c.at(x), c.at(y), axes.data(), rank, params, at_or_null(c, scales), c.at(work));
    });
}

void emit_resize(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const ResizePlan p = resize_plan(op);
    const Variable& x = in(op, "x");
    const auto& a = p.params;
    cpp::use(ctx, "resize");
    ctx.comment(std::string("x ") + x.order().str() + ", " + graft_rt::resize_mode_name(a.mode) + " sampling, " +
                graft_rt::resize_coord_name(a.coord) + " coordinates");
    ctx.line("constexpr graft_rt::ResizeParams params = {{graft_rt::ResizeMode::{}, graft_rt::ResizeCoord::{}, graft_rt::ResizeRound::{}, {}, {}, {}}};",
             graft_rt::resize_mode_name(a.mode), graft_rt::resize_coord_name(a.coord), graft_rt::resize_round_name(a.round), a.cubic_a,
             a.exclude_outside, a.extrapolation);
    ctx.line("constexpr graft_rt::ResizeAxis axes[] = {{  // in, out, resized, scale, scale_index, roi_start, roi_end");
    for (std::size_t i = 0; i < p.axes.size(); ++i) {
        const auto& e = p.axes[i];
        ctx.line("    {{{}, {}, {}, {}, {}, {}, {}}},  // {}", e.in, e.out, e.resized, e.scale, e.scale_index, e.roi_start, e.roi_end,
                 x.order()[i].name());
    }
    ctx.line("};");
    const auto rank = static_cast<int>(p.axes.size());
    const std::string work = ctx.scratch(static_cast<std::size_t>(std::max<i64>(graft_rt::resize_work_floats(a, p.axes.data(), rank), 1)));
    ctx.line("graft_rt::resize({}, {}, axes, {}, params, {}, {});", ctx.input("x"), ctx.output("y"), rank, cpp::input_or_null(ctx, "scales"),
             work);
}

}  // namespace

ResizePlan resize_plan(const Operator& op) {
    if (op.type() == kUpsample) return plan_upsample(op);
    if (op.type() == kResizeBilinear) return plan_bilinear(op);
    return plan_resize(op);
}

void register_resize(Registry& r) {
    OpDef(kResize, {"x", "scales?"}, infer_resize,
          "ONNX Resize along the axes `axes` to `sizes`: mode nearest | linear | cubic, coordinate_transformation_mode, "
          "nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value; per axis scales, roi, or scale_index (the "
          "entry of input scales, read when the model runs); any layout")
        .add(r, build_resize, emit_resize);
    OpDef(kUpsample, {"x"}, infer_resize,
          "nearest-neighbour upsampling: every entry repeated `factors` times along the axes `axes`, any layout")
        .add(r, build_resize, emit_resize);
    OpDef(kResizeBilinear, {"x"}, infer_resize,
          "bilinear upsampling of H and W by integer factors[2]; attr half_pixel (TF 2 sampling) or not (TF 1), any layout")
        .add(r, build_resize, emit_resize);
}

}  // namespace graft::ops
