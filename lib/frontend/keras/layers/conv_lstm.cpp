// Keras ConvLSTM2D and ConvLSTM1D (tf.keras 2.x, Keras 3) as graft's ConvLSTM2D (1-D: H = 1).
// Keras' cell (keras/layers/rnn/base_conv_lstm.py, ConvLSTMCell): kernel (k..., c_in, 4 f) and
// recurrent_kernel (k..., f, 4 f) split into gates i, f, c, o along the last axis, bias (4 f);
// the input convolution has the layer's strides, padding and dilation, the recurrent one stride 1
// and same padding; states start at zero. return_sequences, return_state, go_backwards (sequences
// in the order processed), both data formats. Dropout does nothing at inference; stateful,
// initial states given as inputs and masked inputs are refused.
#include "frontend/keras/layers/spatial.hpp"
#include "ops/op_types.hpp"

namespace graft::keras {

namespace {

using i64 = std::int64_t;

const Order kOrderNTHWC{Axis::N, Axis::T, Axis::H, Axis::W, Axis::C};
const Order kOrderNTCHW{Axis::N, Axis::T, Axis::C, Axis::H, Axis::W};
const Order kOrderNTWC{Axis::N, Axis::T, Axis::W, Axis::C};
const Order kOrderNTCW{Axis::N, Axis::T, Axis::C, Axis::W};

/// x viewed as `shape` (the batch solved); entries named in `follow` keep x's size on that axis,
/// free or not.
Variable* reshape(LayerContext& ctx, Variable* x, const Order& in, const Order& out, Shape shape, std::vector<std::string> follow,
                  const char* suffix) {
    Attributes a;
    a.set("in_order", in);
    a.set("out_order", out);
    a.set("shape", std::move(shape));
    a.set("follow", std::move(follow));
    return ctx.op(ops::kReshape, {{"x", x}}, std::move(a), suffix)->output("y");
}

void conv_lstm(LayerContext& ctx, std::size_t nd) {
    const Config& c = ctx.config();
    if (c.get_bool("stateful", false))
        ctx.fail_unsupported("stateful recurrent layers keep state between calls, which graft does not model; "
                             "re-save the model with stateful=False");
    if (ctx.num_inputs() != 1)
        ctx.fail_unsupported("initial states given as inputs are not supported for ConvLSTM layers (called with " +
                             std::to_string(ctx.num_inputs()) + " inputs)");
    const i64 filters = c.get_size("filters");
    const std::vector<i64> kernel = c.get_sizes("kernel_size", nd);
    const std::vector<i64> strides = c.has("strides") ? c.get_sizes("strides", nd) : std::vector<i64>(nd, 1);
    const std::vector<i64> dilation = c.has("dilation_rate") ? c.get_sizes("dilation_rate", nd) : std::vector<i64>(nd, 1);
    const std::string padding = c.get_string("padding", "valid");
    if (padding != "valid" && padding != "same") ctx.fail_unsupported("padding '" + padding + "' (Keras has valid and same)");
    const bool cf = channels_first(ctx), use_bias = c.get_bool("use_bias", true);
    const bool sequences = c.get_bool("return_sequences", false), state = c.get_bool("return_state", false);

    const Order& logical_in = nd == 2 ? (cf ? kOrderNTCHW : kOrderNTHWC) : (cf ? kOrderNTCW : kOrderNTWC);
    const Value x = ctx.relabel(ctx.input(0), logical_in);
    const i64 cin = x.var->size(Axis::C), t = x.var->size(Axis::T);
    if (cin == kDynamic) ctx.fail_shape("the input's channels have no fixed size");
    checked::product(ctx.where(), "kernel", {kernel[0], nd == 2 ? kernel[1] : 1, cin, 4, filters});
    checked::product(ctx.where(), "recurrent kernel", {kernel[0], nd == 2 ? kernel[1] : 1, filters, 4, filters});
    Variable* x5 = x.var;
    if (nd == 1)
        x5 = reshape(ctx, x.var, kOrderNTWC, kOrderNTHWC, {kDynamic, t, 1, x.var->size(Axis::W), cin}, {"", "T", "", "W", ""}, "as_2d");

    ctx.expect_weights(use_bias ? 3 : 2);
    // Keras' (k..., c, 4 f) kernels; 1-D gains a unit kernel height (same data).
    auto kernel_var = [&](std::size_t i, i64 rows) {
        const WeightArray& w = ctx.weight(i);
        Shape want(kernel.begin(), kernel.end());
        want.push_back(rows);
        want.push_back(4 * filters);
        if (w.shape != want)
            ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected " + shape_str(want) +
                           " from the layer's config");
        if (nd == 1) want.insert(want.begin(), 1);
        return ctx.graph().add_constant(ctx.graph().unique_name(w.name), OrderHWCN, want, w.data);
    };
    NamedVars ins{{"x", x5}, {"w", kernel_var(0, cin)}, {"r", kernel_var(1, filters)}};
    if (use_bias) ins.emplace_back("b", ctx.constant(ctx.weight(2), OrderC, {4 * filters}));

    Attributes a;
    auto lift = [&](std::vector<i64> v) {
        if (nd == 1) v.insert(v.begin(), 1);
        return v;
    };
    a.set("strides", lift(strides));
    a.set("dilations", lift(dilation));
    a.set("padding", padding);
    a.set("activation", activation_name(ctx, c.get_string("activation", "tanh")));
    a.set("recurrent_activation", activation_name(ctx, c.get_string("recurrent_activation", "hard_sigmoid")));
    a.set("return_sequences", sequences);
    a.set("return_state", state);
    a.set("go_backwards", c.get_bool("go_backwards", false));
    Operator* op = ctx.op(ops::kConvLSTM2D, std::move(ins), std::move(a));

    // Keras' positional orders of the outputs: (N, T, spatial..., F) or channels_first (N, T, F, spatial...).
    auto state_value = [&](Variable* v) {
        if (nd == 1) v = spatial::from_2d(ctx, v);
        return Value{v, spatial::logical(nd, cf)};
    };
    std::vector<Value> outs;
    Variable* y = op->output("y");
    if (sequences) {
        if (nd == 1)
            y = reshape(ctx, y, kOrderNTHWC, kOrderNTWC, {kDynamic, t, y->size(Axis::W), filters}, {"", "T", "W", ""}, "as_1d");
        outs.push_back({y, nd == 2 ? (cf ? kOrderNTCHW : kOrderNTHWC) : (cf ? kOrderNTCW : kOrderNTWC)});
    } else {
        outs.push_back(state_value(y));
    }
    if (state) {
        outs.push_back(state_value(op->output("h")));
        outs.push_back(state_value(op->output("c")));
    }
    ctx.set_outputs(std::move(outs));
}

}  // namespace

void register_conv_lstm(Registry& r) {
    r.add_converter("keras", "ConvLSTM1D", [](LayerContext& c) { conv_lstm(c, 1); });
    r.add_converter("keras", "ConvLSTM2D", [](LayerContext& c) { conv_lstm(c, 2); });
}

}  // namespace graft::keras
