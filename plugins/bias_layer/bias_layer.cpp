// bias_layer: the Keras custom layer BiasLayer, y = x + bias, with one trainable weight `bias`
// of shape (features,) added along the last axis. A converter handler only: it maps the layer to
// graft's built-in BiasAdd op with the weight as a ConstantVariable in OrderC, so the native
// backend (and every later backend) runs it with kernels graft already has.
//
// The Keras side, for reference:
//
//   class BiasLayer(keras.layers.Layer):
//       def build(self, input_shape):
//           self.bias = self.add_weight('bias', shape=(input_shape[-1],), initializer='zeros')
//       def call(self, x):
//           return x + self.bias
#include <graft/frontend/layer.hpp>
#include <graft/plugin.hpp>

namespace {

void convert_bias_layer(graft::LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    ctx.expect_weights(1);
    const graft::Value& x = ctx.input(0);
    // Keras adds the bias along its last positional axis; graft names it (C for NC, NTC, NHWC, ...).
    const auto [axis, bias] = ctx.last_axis_weight(x, "bias", "features");

    graft::Attributes attrs;
    attrs.set("axis", axis);
    graft::Operator* op = ctx.op("BiasAdd", {{"x", x.var}, {"b", bias}}, std::move(attrs));
    ctx.set_outputs({graft::Value{op->output("y"), x.logical}});
}

void register_bias_layer(graft::Registry& registry) {
    registry.add_converter("keras", "BiasLayer", convert_bias_layer);
}

}  // namespace

GRAFT_PLUGIN("bias_layer", "1.0.0", register_bias_layer)
