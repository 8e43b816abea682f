// Resize (opsets 10, 11, 13) and Upsample (7, 9) as graft's Resize op. Scales, sizes and roi are
// known when converting (constants, shape arithmetic), so every output length is fixed. The one
// exception: scales that are a model input, read when the model runs, when the model declares
// the output's shape (ONNX's node tests feed scales so); the kernel then checks that they give
// the declared lengths (NaN otherwise).
//
// Before opset 11 (Upsample, Resize-10) there are no coordinate modes: positions scale from the
// corner (asymmetric), and nearest sampling rounds down when scaling up, up when scaling down.
//
// GridSample (opset 16; opset 20's names linear / cubic too) of 4-D inputs as graft's GridSample.
#include <cmath>

#include "frontend/onnx/ops/ops.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

using i64 = std::int64_t;

/// Input `i` (scales, sizes, roi) if it is given and not empty.
bool given(const NodeContext& ctx, std::size_t i) {
    if (!ctx.has_input(i)) return false;
    const HostTensor* t = ctx.known(i);
    return !t || t->numel() != 0;
}

/// The known floats of input `i` (roi, scales): `n` of them.
std::vector<float> known_floats(const NodeContext& ctx, std::size_t i, const std::string& what, std::size_t n) {
    const HostTensor* t = ctx.known(i);
    if (!t)
        ctx.fail_needs_value(i, "input '" + ctx.node().input(static_cast<int>(i)) + "' (" + what +
                             ") is computed when the model runs; graft needs it known when converting");
    auto v = t->floats();
    if (v.size() != n) ctx.fail_format(what + " has " + std::to_string(v.size()) + " entries, expected " + std::to_string(n));
    return v;
}

void resize(NodeContext& ctx) {
    const bool upsample = ctx.node().op_type() == "Upsample";
    const bool legacy = upsample || ctx.opset() < 11;
    const bool attr_scales = upsample && ctx.opset() < 9;
    expect_inputs(ctx, 1, attr_scales ? 1 : legacy ? 2 : 4);
    const auto& c = ctx.config();
    const Value x = ctx.input(0);
    const std::size_t rank = x.logical.ndim();
    const Shape xs = logical_shape(x);
    if (rank == 0) ctx.fail_shape("cannot resize a scalar");

    Attributes a;
    const std::string mode = c.get_string("mode", "nearest");
    if (mode != "nearest" && mode != "linear" && (legacy || mode != "cubic")) ctx.fail_unsupported("mode '" + mode + "'");
    a.set("mode", mode);
    const std::string coord = legacy ? "asymmetric" : c.get_string("coordinate_transformation_mode", "half_pixel");
    a.set("coordinate_transformation_mode", coord);
    a.set("nearest_mode", legacy ? std::string("simple") : c.get_string("nearest_mode", "round_prefer_floor"));
    a.set("cubic_coeff_a", c.get_float("cubic_coeff_a", -0.75));
    a.set("exclude_outside", c.get_int("exclude_outside", 0) != 0);
    a.set("extrapolation_value", c.get_float("extrapolation_value", 0.0));

    // Where the output lengths come from.
    const std::size_t scales_at = legacy ? 1 : 2, sizes_at = 3;
    const bool has_sizes = !legacy && given(ctx, sizes_at), has_scales = !attr_scales && given(ctx, scales_at);
    if (has_sizes == (has_scales || attr_scales)) ctx.fail_format("needs exactly one of scales and sizes");
    std::vector<float> scales(rank, 0.f);
    std::vector<i64> sizes(rank, 0);
    Variable* runtime = nullptr;
    if (attr_scales) {
        const Config s = c.get("scales");
        if (s.size() != rank) ctx.fail_format("attribute scales has " + std::to_string(s.size()) + " entries, expected " + std::to_string(rank));
        for (std::size_t i = 0; i < rank; ++i) scales[i] = static_cast<float>(s.at(i).as_float());
    } else if (has_sizes) {
        // PyTorch computes sizes from Shape(x): with a dynamic batch, the batch's entry is N itself.
        const auto given_sizes = ctx.known_sym_ints(sizes_at, "sizes");
        if (given_sizes.size() != rank) ctx.fail_format("sizes has " + std::to_string(given_sizes.size()) + " entries, expected " + std::to_string(rank));
        const auto dims = ctx.dims(0);
        for (std::size_t i = 0; i < rank; ++i) {
            if (given_sizes[i] == dims[i]) sizes[i] = xs[i];  // the input's own length (kDynamic for the batch)
            else if (given_sizes[i].fixed()) sizes[i] = given_sizes[i].value;
            else ctx.fail_unsupported("a size of " + given_sizes[i].str() + " along axis " + std::to_string(i) + " (N: the batch size)");
        }
    } else if (ctx.known(scales_at)) {
        scales = known_floats(ctx, scales_at, "scales", rank);
    } else {
        const Value& s = ctx.input(scales_at);
        const auto declared = ctx.declared_shape(0);
        if (!ctx.graph().is_input(s.var) || !declared || declared->size() != rank)
            ctx.fail_needs_value(scales_at, "input '" + ctx.node().input(static_cast<int>(scales_at)) +
                                 "' (scales) is computed when the model runs; graft needs it known when converting (or a "
                                 "model input, with the output's shape declared)");
        if (numel(s.var->shape()) != static_cast<i64>(rank))
            ctx.fail_shape("scales holds " + shape_str(s.var->shape()) + " entries, expected " + std::to_string(rank));
        runtime = s.var;
        sizes = *declared;
    }
    for (std::size_t i = 0; i < rank && !runtime; ++i) {
        if (scales[i] != 0 && !(scales[i] > 0 && std::isfinite(scales[i])))
            ctx.fail_format("scale " + std::to_string(scales[i]) + " along axis " + std::to_string(i) + " is not positive");
        if (scales[i] != 0 && xs[i] != kDynamic) {
            const double out = std::floor(static_cast<double>(scales[i]) * static_cast<double>(xs[i]));
            if (out > static_cast<double>(kMaxElements))  // before the conversion, which would overflow
                ctx.fail_shape("scale " + std::to_string(scales[i]) + " along axis " + std::to_string(i) + " gives " +
                               std::to_string(out) + " entries, beyond " + checked::limit_str(kMaxElements));
            sizes[i] = static_cast<i64>(out);
        }
    }

    std::vector<double> roi(2 * rank, 0.0);
    for (std::size_t i = 0; i < rank; ++i) roi[rank + i] = 1.0;
    if (coord == "tf_crop_and_resize") {
        if (!given(ctx, 1)) ctx.fail_format("coordinate_transformation_mode tf_crop_and_resize needs input roi");
        const auto r = known_floats(ctx, 1, "roi", 2 * rank);
        roi.assign(r.begin(), r.end());
    }

    // The resized axes: all but those kept as they are (and the batch, which must be).
    std::vector<Axis> axes;
    std::vector<i64> out, index;
    std::vector<double> sc, roi_start, roi_end;
    for (std::size_t i = 0; i < rank; ++i) {
        const bool unit_roi = roi[i] == 0 && roi[rank + i] == 1;
        const bool same = runtime ? false : scales[i] != 0 ? scales[i] == 1 : sizes[i] == xs[i];
        const bool kept = same && unit_roi && coord != "tf_half_pixel_for_nn";
        if (x.logical[i] == Axis::N) {
            if (runtime) continue;  // the batch keeps its size: its scale is not read
            if (!kept) ctx.fail_unsupported("resizing the first (batch) axis");
            continue;
        }
        if (kept) continue;
        if (sizes[i] < 1)
            ctx.fail_unsupported("an output of unknown or zero length along axis " + std::to_string(i) + " (" + std::to_string(sizes[i]) + ")");
        axes.push_back(x.logical[i]);
        out.push_back(sizes[i]);
        sc.push_back(scales[i]);
        index.push_back(static_cast<i64>(i));
        roi_start.push_back(roi[i]), roi_end.push_back(roi[rank + i]);
    }
    if (axes.empty()) return ctx.set_outputs({x});
    a.set("axes", Order(axes));
    a.set("sizes", out);
    if (runtime) a.set("scale_index", index);
    else if (!has_sizes) a.set("scales", sc);
    if (coord == "tf_crop_and_resize") {
        roi_start.insert(roi_start.end(), roi_end.begin(), roi_end.end());
        a.set("roi", roi_start);
    }
    NamedVars ins{{"x", x.var}};
    if (runtime) ins.emplace_back("scales", runtime);
    ctx.set_outputs({emit(ctx, ops::kResize, std::move(ins), std::move(a), x.logical)});
}

void grid_sample(NodeContext& ctx) {
    expect_inputs(ctx, 2, 2);
    const Value& x = ctx.input(0);
    if (x.logical.ndim() != 4 || ctx.input(1).logical.ndim() != 4)
        ctx.fail_unsupported("GridSample of a rank-" + std::to_string(x.logical.ndim()) + " input (graft samples 4-D N, C, H, W images)");
    // graft's op checks mode and padding_mode (UnsupportedError naming the node); opset 20 renamed
    // two modes.
    std::string mode = ctx.config().get_string("mode", "bilinear");
    if (mode == "linear") mode = "bilinear";
    if (mode == "cubic") mode = "bicubic";
    Attributes a;
    a.set("mode", mode);
    a.set("padding_mode", ctx.config().get_string("padding_mode", "zeros"));
    a.set("align_corners", ctx.config().get_int("align_corners", 0) != 0);
    // By position, x's axes are N, C, H, W and the grid's N, Ho, Wo, then the coordinates (C).
    Variable* grid = laid_out(ctx, ctx.input(1), OrderNHWC, OrderNHWC, "grid");
    Variable* xv = x.logical == OrderNCHW ? x.var : laid_out(ctx, x, OrderNCHW, OrderNCHW, "x");
    ctx.set_outputs({emit(ctx, ops::kGridSample, {{"x", xv}, {"grid", grid}}, std::move(a), OrderNCHW)});
}

}  // namespace

void register_resize(Registry& r) {
    add(r, "GridSample", grid_sample);
    add(r, "Resize", resize);
    add(r, "Upsample", resize);
}

}  // namespace graft::onnx
