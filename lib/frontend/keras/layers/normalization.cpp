// Keras BatchNormalization at inference (any axis; center and scale may be off).
#include "frontend/keras/layers/layers.hpp"

namespace graft::keras {

namespace {

void batch_norm(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const auto& c = ctx.config();
    const Value& x = ctx.input(0);
    auto axes = c.has("axis") ? c.get_ints("axis") : std::vector<std::int64_t>{-1};
    if (axes.size() != 1) ctx.fail_unsupported("normalizing over several axes at once is not supported yet");
    if (c.get_int("mode", 0) != 0) ctx.fail_unsupported("Keras 1 BatchNormalization mode " + std::to_string(c.get_int("mode")) + " (only mode 0 is)");
    const Axis axis = keras_axis(ctx, x, axes[0]);
    const std::int64_t ch = x.var->size(axis);
    const bool scale = c.get_bool("scale", true), center = c.get_bool("center", true);
    ctx.expect_weights((scale ? 1u : 0u) + (center ? 1u : 0u) + 2u);
    std::size_t i = 0;
    NamedVars ins{{"x", x.var}};
    if (scale) ins.emplace_back("gamma", ctx.constant(ctx.weight(i++), OrderC, {ch}));
    if (center) ins.emplace_back("beta", ctx.constant(ctx.weight(i++), OrderC, {ch}));
    ins.emplace_back("mean", ctx.constant(ctx.weight(i++), OrderC, {ch}));
    ins.emplace_back("var", ctx.constant(ctx.weight(i++), OrderC, {ch}));
    Attributes a;
    a.set("axis", axis);
    a.set("epsilon", c.get_float("epsilon", 1e-3));
    set_output(ctx, ctx.op("BatchNormalization", std::move(ins), std::move(a))->output("y"), x.logical);
}

}  // namespace

void register_normalization(Registry& r) { r.add_converter("keras", "BatchNormalization", batch_norm); }

}  // namespace graft::keras
