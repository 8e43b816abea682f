// Keras MaxPooling2D, AveragePooling2D, GlobalMaxPooling2D and GlobalAveragePooling2D.
#include "frontend/keras/layers/layers.hpp"

namespace graft::keras {

namespace {

void pool2d(LayerContext& ctx, const char* kind) {
    ctx.expect_inputs(1, 1);
    const auto& c = ctx.config();
    const Order logical = channels_first(ctx) ? OrderNCHW : OrderNHWC;
    const Value x = ctx.relabel(ctx.input(0), logical);
    auto size = c.has("pool_size") ? c.get_ints("pool_size", 2) : std::vector<std::int64_t>{2, 2};
    auto strides = c.has("strides") ? c.get_ints("strides", 2) : size;
    Attributes a;
    a.set("kind", kind);
    a.set("pool_size", size);
    a.set("strides", strides);
    a.set("padding", c.get_string("padding", c.get_string("border_mode", "valid")));
    set_output(ctx, ctx.op("Pool2D", {{"x", x.var}}, std::move(a))->output("y"), logical);
}

void global_pool2d(LayerContext& ctx, const char* kind) {
    ctx.expect_inputs(1, 1);
    const bool cf = channels_first(ctx);
    const Value x = ctx.relabel(ctx.input(0), cf ? OrderNCHW : OrderNHWC);
    Attributes a;
    a.set("kind", kind);
    a.set("axes", Order{Axis::H, Axis::W});
    Variable* y = ctx.op("GlobalPool", {{"x", x.var}}, std::move(a))->output("y");
    if (!ctx.config().get_bool("keepdims", false)) return set_output(ctx, y, OrderNC);
    const std::int64_t ch = x.var->size(Axis::C);
    Attributes r;
    r.set("in_order", OrderNC);
    r.set("out_order", cf ? OrderNCHW : OrderNHWC);
    r.set("shape", cf ? Shape{kDynamic, ch, 1, 1} : Shape{kDynamic, 1, 1, ch});
    set_output(ctx, ctx.op("Reshape", {{"x", y}}, std::move(r), "keepdims")->output("y"), cf ? OrderNCHW : OrderNHWC);
}

}  // namespace

void register_pooling(Registry& r) {
    r.add_converter("keras", "MaxPooling2D", [](LayerContext& c) { pool2d(c, "max"); });
    r.add_converter("keras", "AveragePooling2D", [](LayerContext& c) { pool2d(c, "avg"); });
    r.add_converter("keras", "MaxPool2D", [](LayerContext& c) { pool2d(c, "max"); });
    r.add_converter("keras", "AvgPool2D", [](LayerContext& c) { pool2d(c, "avg"); });
    r.add_converter("keras", "GlobalMaxPooling2D", [](LayerContext& c) { global_pool2d(c, "max"); });
    r.add_converter("keras", "GlobalAveragePooling2D", [](LayerContext& c) { global_pool2d(c, "avg"); });
    r.add_converter("keras", "GlobalMaxPool2D", [](LayerContext& c) { global_pool2d(c, "max"); });
    r.add_converter("keras", "GlobalAvgPool2D", [](LayerContext& c) { global_pool2d(c, "avg"); });
}

}  // namespace graft::keras
