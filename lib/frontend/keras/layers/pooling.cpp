// Keras pooling: MaxPooling1D/2D/3D, AveragePooling1D/2D/3D and GlobalMax/AveragePooling1D/2D/3D
// (keepdims), channels_last and channels_first (Keras 1 dim_ordering 'th'), Keras 1 spellings
// (pool_length, stride, border_mode). 1-D pooling runs on the 2-D kernel with H = 1.
#include "frontend/keras/layers/spatial.hpp"
#include "ops/op_types.hpp"

namespace graft::keras {

namespace {

void pool(LayerContext& ctx, std::size_t nd, const char* kind) {
    ctx.expect_inputs(1, 1);
    const auto& c = ctx.config();
    const bool cf = channels_first(ctx);
    const Order logical = spatial::logical(nd, cf);
    const Value x = ctx.relabel(ctx.input(0), logical);
    std::vector<std::int64_t> size(nd, 2), strides;
    if (c.has("pool_size")) size = c.get_sizes("pool_size", nd);
    else if (nd == 1 && c.has("pool_length")) size = {c.get_size("pool_length")};
    if (c.has("strides")) strides = c.get_sizes("strides", nd);
    else if (nd == 1 && c.has("stride")) strides = {c.get_size("stride")};
    else strides = size;
    const std::string padding = c.get_string("padding", c.get_string("border_mode", "valid"));
    if (padding != "valid" && padding != "same") ctx.fail_unsupported("padding '" + padding + "'");
    Attributes a;
    a.set("kind", kind);
    a.set("padding", padding);
    if (nd == 1) {
        size.insert(size.begin(), 1);
        strides.insert(strides.begin(), 1);
    }
    a.set("pool_size", size);
    a.set("strides", strides);
    if (nd == 3) return set_output(ctx, ctx.op(ops::kPool3D, {{"x", x.var}}, std::move(a))->output("y"), logical);
    Variable* in = nd == 1 ? spatial::to_2d(ctx, x.var) : x.var;
    Variable* y = ctx.op(ops::kPool2D, {{"x", in}}, std::move(a))->output("y");
    set_output(ctx, nd == 1 ? spatial::from_2d(ctx, y) : y, logical);
}

void global_pool(LayerContext& ctx, std::size_t nd, const char* kind) {
    ctx.expect_inputs(1, 1);
    const bool cf = channels_first(ctx);
    const Order logical = spatial::logical(nd, cf);
    const Value x = ctx.relabel(ctx.input(0), logical);
    Attributes a;
    a.set("kind", kind);
    a.set("axes", Order(spatial::axes(nd)));
    Variable* y = ctx.op(ops::kGlobalPool, {{"x", x.var}}, std::move(a))->output("y");
    if (!ctx.config().get_bool("keepdims", false)) return set_output(ctx, y, OrderNC);
    const std::int64_t ch = x.var->size(Axis::C);
    Shape shape(nd + 2, 1);
    shape[0] = kDynamic;
    shape[cf ? 1 : nd + 1] = ch;
    Attributes r;
    r.set("in_order", OrderNC);
    r.set("out_order", logical);
    r.set("shape", shape);
    set_output(ctx, ctx.op(ops::kReshape, {{"x", y}}, std::move(r), "keepdims")->output("y"), logical);
}

}  // namespace

void register_pooling(Registry& r) {
    for (std::size_t nd : {1, 2, 3}) {
        const std::string d = std::to_string(nd) + "D";
        for (const std::string& name : {"MaxPooling" + d, "MaxPool" + d})
            r.add_converter("keras", name, [nd](LayerContext& c) { pool(c, nd, "max"); });
        for (const std::string& name : {"AveragePooling" + d, "AvgPool" + d})
            r.add_converter("keras", name, [nd](LayerContext& c) { pool(c, nd, "avg"); });
        for (const std::string& name : {"GlobalMaxPooling" + d, "GlobalMaxPool" + d})
            r.add_converter("keras", name, [nd](LayerContext& c) { global_pool(c, nd, "max"); });
        for (const std::string& name : {"GlobalAveragePooling" + d, "GlobalAvgPool" + d})
            r.add_converter("keras", name, [nd](LayerContext& c) { global_pool(c, nd, "avg"); });
    }
}

}  // namespace graft::keras
