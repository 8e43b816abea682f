// channel_swish: a custom op with its own generator. The Keras custom layer ChannelSwish
// computes y = x * sigmoid(beta[c] * x) with one learned beta per channel (the last axis):
//
//   class ChannelSwish(keras.layers.Layer):
//       def build(self, input_shape):
//           self.beta = self.add_weight('beta', shape=(input_shape[-1],), initializer='ones')
//       def call(self, x):
//           return x * keras.activations.sigmoid(self.beta * x)
//
// graft has no such op, so this plugin brings all three parts:
//   - the op type "ChannelSwish" and its schema (inputs x and beta, attribute axis; the output
//     has x's order and shape; any memory order works since the axis is named),
//   - its kernel, written once in channel_swish_kernel.hpp: the kernel builder runs it and the
//     C++ emitter writes the same text into generated code,
//   - the Keras converter handler that emits it.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include <graft/backend/native_kernel.hpp>
#include <graft/frontend/layer.hpp>
#include <graft/plugin.hpp>

#include "channel_swish_kernel.hpp"

// The text of channel_swish_kernel.hpp (graft_embed_text in plugins/CMakeLists.txt).
extern const graft::cpp::EmbeddedText channel_swish_kernel_text[];

namespace {

using graft::Operator;

std::vector<std::pair<std::string, graft::TensorType>> infer_channel_swish(const Operator& op) {
    const graft::Variable& x = *op.input("x");
    const graft::Variable& beta = *op.input("beta");
    const graft::Axis axis = op.attrs().get_axis("axis", op.describe());
    if (!x.order().has(axis)) throw graft::ShapeError(op.describe() + ": input " + x.describe() + " has no axis " + axis.name());
    const std::int64_t channels = x.size(axis);
    if (beta.ndim() != 1 || beta.shape()[0] != channels)
        throw graft::ShapeError(op.describe() + ": beta " + beta.describe() + " should be 1-D [" + std::to_string(channels) +
                                "] like axis " + axis.name() + " of the input");
    return graft::infer_like_x(op);
}

/// x viewed as [outer, channels, inner] around `axis`.
struct Split {
    std::int64_t outer = 1, channels = 1, inner = 1;
};
Split split_at(const graft::Variable& v, const graft::Axis& axis) {
    Split s;
    const std::size_t a = v.order().index(axis);
    for (std::size_t i = 0; i < v.ndim(); ++i) {
        if (i < a) s.outer *= v.shape()[i];
        else if (i == a) s.channels = v.shape()[i];
        else s.inner *= v.shape()[i];
    }
    return s;
}

std::unique_ptr<graft::native::Kernel> build_channel_swish(graft::native::BuildContext& b) {
    const Operator& op = b.op();
    const Split s = split_at(*op.input("x"), op.attrs().get_axis("axis", op.describe()));
    const auto x = b.in("x"), beta = b.in("beta"), y = b.out("y");
    return graft::native::make_kernel(
        [=](const graft::native::RunContext& c) { graft_rt::channel_swish(c.at(x), c.at(beta), c.at(y), s.outer, s.channels, s.inner); });
}

/// Its C++ emitter (graft convert --backend cpp): the kernel header as a support section of the
/// generated code, and a call with the op's sizes as constants.
void emit_channel_swish(graft::cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Split s = split_at(*op.input("x"), op.attrs().get_axis("axis", op.describe()));
    ctx.support_header("channel_swish", channel_swish_kernel_text[0].text);  // the same code the kernel runs
    ctx.constant_i64("outer", s.outer, "axes before the channel axis");
    ctx.constant_i64("channels", s.channels);
    ctx.constant_i64("inner", s.inner, "axes after it");
    ctx.line("graft_rt::channel_swish({}, {}, {}, outer, channels, inner);", ctx.input("x"), ctx.input("beta"), ctx.output("y"));
}

void convert_channel_swish(graft::LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    ctx.expect_weights(1);
    const graft::Value& x = ctx.input(0);
    const auto [axis, beta] = ctx.last_axis_weight(x, "beta", "channels");  // channels last, as the layer's build() says

    graft::Attributes attrs;
    attrs.set("axis", axis);
    Operator* op = ctx.op("ChannelSwish", {{"x", x.var}, {"beta", beta}}, std::move(attrs));
    ctx.set_outputs({graft::Value{op->output("y"), x.logical}});
}

void register_channel_swish(graft::Registry& registry) {
    graft::OpSchema s;
    s.type = "ChannelSwish";
    s.inputs = {"x", "beta"};
    s.infer = infer_channel_swish;
    s.inplace = true;
    s.doc = "y = x * sigmoid(beta[c] * x) along axis `axis` (plugin channel_swish)";
    registry.add_op(std::move(s));
    registry.add_generator<graft::native::Backend>("ChannelSwish", build_channel_swish);
    registry.add_generator<graft::cpp::Backend>("ChannelSwish", emit_channel_swish);
    registry.add_converter("keras", "ChannelSwish", convert_channel_swish);
}

}  // namespace

GRAFT_PLUGIN("channel_swish", "1.0.0", register_channel_swish)
