// Keras Conv1D and Conv2D (channels_last and channels_first; valid, same, causal; strides,
// dilation). Kernels keep Keras' layout: (k, c_in, c_out) and (kh, kw, c_in, c_out).
#include "frontend/keras/layers/layers.hpp"

namespace graft::keras {

namespace {

const Order kOrderTCN{Axis::T, Axis::C, Axis::N};

struct ConvConfig {
    std::int64_t filters;
    std::vector<std::int64_t> kernel, strides, dilation;
    std::string padding;
    bool use_bias;
};

ConvConfig read_conv(LayerContext& ctx, std::size_t nd) {
    const auto& c = ctx.config();
    if (ctx.framework_version().rfind("1.", 0) == 0)
        ctx.fail_unsupported("Keras 1 convolution configs and kernel layouts are not supported yet");
    ConvConfig k;
    k.filters = c.get_int("filters");
    k.kernel = c.get_ints("kernel_size", nd);
    k.strides = c.has("strides") ? c.get_ints("strides", nd) : std::vector<std::int64_t>(nd, 1);
    k.dilation = c.has("dilation_rate") ? c.get_ints("dilation_rate", nd) : std::vector<std::int64_t>(nd, 1);
    k.padding = c.get_string("padding", "valid");
    k.use_bias = c.get_bool("use_bias", true);
    if (c.get_int("groups", 1) != 1) ctx.fail_unsupported("grouped convolutions (groups > 1) are not supported yet");
    bool strided = false, dilated = false;
    for (std::size_t i = 0; i < nd; ++i) strided |= k.strides[i] != 1, dilated |= k.dilation[i] != 1;
    if (strided && dilated) ctx.fail_format("strides and dilation_rate cannot both exceed 1");
    ctx.expect_weights(k.use_bias ? 2 : 1);
    return k;
}

void conv(LayerContext& ctx, std::size_t nd) {
    ctx.expect_inputs(1, 1);
    const ConvConfig k = read_conv(ctx, nd);
    const bool cf = channels_first(ctx);
    const Order logical = nd == 1 ? (cf ? OrderNCT : OrderNTC) : (cf ? OrderNCHW : OrderNHWC);
    const Value x = ctx.relabel(ctx.input(0), logical);
    const std::int64_t cin = x.var->size(Axis::C);
    ConstantVariable* w = nd == 1 ? ctx.constant(ctx.weight(0), kOrderTCN, {k.kernel[0], cin, k.filters})
                                  : ctx.constant(ctx.weight(0), OrderHWCN, {k.kernel[0], k.kernel[1], cin, k.filters});
    NamedVars ins{{"x", x.var}, {"w", w}};
    if (k.use_bias) ins.emplace_back("b", ctx.constant(ctx.weight(1), OrderC, {k.filters}));
    Attributes a;
    a.set("strides", k.strides);
    a.set("dilations", k.dilation);
    a.set("padding", k.padding);
    Value y{ctx.op(nd == 1 ? "Conv1D" : "Conv2D", std::move(ins), std::move(a))->output("y"), logical};
    ctx.set_outputs({apply_activation(ctx, y, ctx.config().get_string("activation", "linear"))});
}

}  // namespace

void register_conv(Registry& r) {
    r.add_converter("keras", "Conv1D", [](LayerContext& c) { conv(c, 1); });
    r.add_converter("keras", "Conv2D", [](LayerContext& c) { conv(c, 2); });
    r.add_converter("keras", "Convolution1D", [](LayerContext& c) { conv(c, 1); });
    r.add_converter("keras", "Convolution2D", [](LayerContext& c) { conv(c, 2); });
}

}  // namespace graft::keras
