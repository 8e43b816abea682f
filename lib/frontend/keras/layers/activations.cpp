// Keras activation layers: ReLU (max_value, negative_slope, threshold), LeakyReLU, ELU,
// ThresholdedReLU, Softmax (axis).
#include "frontend/keras/layers/layers.hpp"

namespace graft::keras {

namespace {

void act(LayerContext& ctx, const std::string& fn, double alpha, double max_value = -1, double threshold = 0) {
    ctx.expect_inputs(1, 1);
    const Value& x = ctx.input(0);
    Attributes a;
    a.set("activation", fn);
    a.set("alpha", alpha);
    a.set("max_value", max_value);
    a.set("threshold", threshold);
    set_output(ctx, ctx.op("Activation", {{"x", x.var}}, std::move(a))->output("y"), x.logical);
}

void relu(LayerContext& ctx) {
    const auto& c = ctx.config();
    const double max_value = c.get_float("max_value", -1.0);
    const double slope = c.get_float("negative_slope", 0.0);
    const double threshold = c.get_float("threshold", 0.0);
    if (c.has("max_value") && max_value < 0) ctx.fail_format("max_value must not be negative");
    if (max_value < 0 && slope == 0.0 && threshold == 0.0) return act(ctx, "relu", 0.0);
    act(ctx, "relu_general", slope, max_value, threshold);
}

void softmax(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const Value& x = ctx.input(0);
    auto axes = ctx.config().has("axis") ? ctx.config().get_ints("axis") : std::vector<std::int64_t>{-1};
    if (axes.size() != 1) ctx.fail_unsupported("softmax over several axes at once is not supported yet");
    Attributes a;
    a.set("axis", keras_axis(ctx, x, axes[0]));
    set_output(ctx, ctx.op("Softmax", {{"x", x.var}}, std::move(a))->output("y"), x.logical);
}

}  // namespace

void register_activations(Registry& r) {
    r.add_converter("keras", "ReLU", relu);
    r.add_converter("keras", "LeakyReLU", [](LayerContext& c) {
        act(c, "leaky_relu", c.config().get_float("alpha", c.config().get_float("negative_slope", 0.3)));
    });
    r.add_converter("keras", "ELU", [](LayerContext& c) { act(c, "elu", c.config().get_float("alpha", 1.0)); });
    r.add_converter("keras", "ThresholdedReLU", [](LayerContext& c) { act(c, "thresholded_relu", c.config().get_float("theta", 1.0)); });
    r.add_converter("keras", "Softmax", softmax);
}

}  // namespace graft::keras
