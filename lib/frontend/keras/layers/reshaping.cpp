// Keras reshaping layers: ZeroPadding1D/2D/3D, Cropping1D/2D/3D, UpSampling1D/2D (nearest,
// bilinear)/3D and RepeatVector (Flatten, Reshape, Permute live in core.cpp). channels_last and
// channels_first; Keras 1 spellings (UpSampling1D length, dim_ordering).
#include <cctype>

#include "frontend/keras/layers/spatial.hpp"
#include "ops/op_types.hpp"

namespace graft::keras {

namespace {

void pad_or_crop(LayerContext& ctx, std::size_t nd, bool crop) {
    ctx.expect_inputs(1, 1);
    const Order logical = spatial::logical(nd, nd > 1 && channels_first(ctx));
    const Value x = ctx.relabel(ctx.input(0), logical);
    const auto p = spatial::pairs(ctx, crop ? "cropping" : "padding", nd);
    std::vector<std::int64_t> begin, end;
    for (std::size_t i = 0; i < nd; ++i) {
        begin.push_back(crop ? -p[i].first : p[i].first);
        end.push_back(crop ? -p[i].second : p[i].second);
    }
    if (crop)
        for (std::size_t i = 0; i < nd; ++i)
            if (x.var->size(spatial::axes(nd)[i]) != kDynamic && p[i].first + p[i].second >= x.var->size(spatial::axes(nd)[i]))
                ctx.fail_shape("cropping " + std::to_string(p[i].first) + "+" + std::to_string(p[i].second) + " leaves nothing of " +
                               x.var->describe());
    Attributes a;
    a.set("axes", Order(spatial::axes(nd)));
    a.set("begin", begin);
    a.set("end", end);
    set_output(ctx, ctx.op(ops::kPad, {{"x", x.var}}, std::move(a))->output("y"), logical);
}

/// Keras 2.0-2.3 (multi-backend) resize bilinear with TF 1's resize_bilinear (no half-pixel
/// centres); tf.keras ("-tf" versions, >= 2.4) and Keras 3 use TF 2's tf.image.resize (half-pixel).
bool half_pixel(const LayerContext& ctx) {
    const std::string& v = ctx.framework_version();
    if (v.find("-tf") != std::string::npos) return true;
    if (v.rfind("2.", 0) == 0) {
        int minor = 0;
        for (std::size_t i = 2; i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])); ++i) minor = minor * 10 + (v[i] - '0');
        return minor >= 4;
    }
    return v.rfind("1.", 0) != 0 && !v.empty();
}

void upsampling(LayerContext& ctx, std::size_t nd) {
    ctx.expect_inputs(1, 1);
    const auto& c = ctx.config();
    const bool cf = nd > 1 && channels_first(ctx);
    const Order logical = spatial::logical(nd, cf);
    const Value x = ctx.relabel(ctx.input(0), logical);
    std::vector<std::int64_t> size(nd, 2);
    if (c.has("size")) size = c.get_sizes("size", nd);
    else if (nd == 1 && c.has("length")) size = {c.get_size("length")};
    const std::string interp = c.get_string("interpolation", "nearest");
    Attributes a;
    a.set("factors", size);
    if (interp == "bilinear" && nd == 2) {
        a.set("half_pixel", half_pixel(ctx));
        return set_output(ctx, ctx.op(ops::kResizeBilinear, {{"x", x.var}}, std::move(a))->output("y"), logical);
    }
    if (interp != "nearest") ctx.fail_unsupported("interpolation '" + interp + "'");
    a.set("axes", Order(spatial::axes(nd)));
    set_output(ctx, ctx.op(ops::kUpsample, {{"x", x.var}}, std::move(a))->output("y"), logical);
}

void repeat_vector(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const std::int64_t n = ctx.config().get_size("n");
    const Value x = ctx.relabel(ctx.input(0), OrderNC);
    Attributes r;
    r.set("in_order", OrderNC);
    r.set("out_order", OrderNTC);
    r.set("shape", Shape{kDynamic, 1, x.var->size(Axis::C)});
    Variable* y = ctx.op(ops::kReshape, {{"x", x.var}}, std::move(r), "as_ntc")->output("y");
    Attributes a;
    a.set("axes", Order{Axis::T});
    a.set("factors", std::vector<std::int64_t>{n});
    set_output(ctx, ctx.op(ops::kUpsample, {{"x", y}}, std::move(a))->output("y"), OrderNTC);
}

}  // namespace

void register_reshaping(Registry& r) {
    for (std::size_t nd : {1, 2, 3}) {
        const std::string d = std::to_string(nd) + "D";
        r.add_converter("keras", "ZeroPadding" + d, [nd](LayerContext& c) { pad_or_crop(c, nd, false); });
        r.add_converter("keras", "Cropping" + d, [nd](LayerContext& c) { pad_or_crop(c, nd, true); });
        r.add_converter("keras", "UpSampling" + d, [nd](LayerContext& c) { upsampling(c, nd); });
    }
    r.add_converter("keras", "RepeatVector", repeat_vector);
}

}  // namespace graft::keras
