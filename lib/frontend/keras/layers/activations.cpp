// Keras activation layers: ReLU (max_value, negative_slope, threshold), LeakyReLU, ELU,
// ThresholdedReLU, Softmax (axis; a Keras 3 axis list is one softmax over all of them), PReLU
// (alpha weight, shared_axes).
#include <algorithm>

#include "frontend/keras/layers/layers.hpp"
#include "ops/op_types.hpp"

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
    set_output(ctx, ctx.op(ops::kActivation, {{"x", x.var}}, std::move(a))->output("y"), x.logical);
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
    if (axes.empty()) ctx.fail_format("'axis' is an empty list");
    if (axes.size() == 1) {
        Attributes a;
        a.set("axis", keras_axis(ctx, x, axes[0]));
        set_output(ctx, ctx.op(ops::kSoftmax, {{"x", x.var}}, std::move(a))->output("y"), x.logical);
        return;
    }
    // Several axes (Keras 3: exp(x - logsumexp over them)): view those axes, moved last, as one
    // axis K (the Reshape's input order makes the optimizer lay them out so), softmax over K,
    // and view the result back.
    std::vector<Axis> rest, red;
    for (auto a : axes) {
        const Axis ax = keras_axis(ctx, x, a);
        if (std::find(red.begin(), red.end(), ax) != red.end()) ctx.fail_format("axis " + std::to_string(a) + " is listed twice");
        red.push_back(ax);
    }
    for (const auto& a : x.logical.axes())
        if (std::find(red.begin(), red.end(), a) == red.end()) rest.push_back(a);
    std::vector<Axis> grouped = rest;
    grouped.insert(grouped.end(), red.begin(), red.end());
    const Axis K("K");
    if (x.logical.has(K)) ctx.fail_unsupported("an input with an axis named K");
    std::vector<Axis> merged = rest;
    merged.push_back(K);
    Shape ms, gs;
    std::int64_t k = 1;
    for (const auto& a : red) {
        if (x.var->size(a) == kDynamic)
            ctx.fail_unsupported("a softmax over several axes, one of which (" + a.name() + ") has a free size in input " +
                                 x.var->describe() + ": give the model a fixed input shape");
        k *= x.var->size(a);
    }
    // The other axes keep the input's sizes, free ones included.
    std::vector<std::string> follow_rest;
    for (const auto& a : rest) ms.push_back(x.var->size(a)), follow_rest.push_back(a.name());
    ms.push_back(k);
    for (const auto& a : grouped) gs.push_back(x.var->size(a));
    std::vector<std::string> follow_ms = follow_rest, follow_gs = follow_rest;
    follow_ms.push_back("");
    follow_gs.resize(grouped.size());
    Attributes r1;
    r1.set("in_order", Order(grouped));
    r1.set("out_order", Order(merged));
    r1.set("shape", ms);
    r1.set("follow", follow_ms);
    Variable* v = ctx.op(ops::kReshape, {{"x", x.var}}, std::move(r1), "merge_axes")->output("y");
    Attributes sa;
    sa.set("axis", K);
    v = ctx.op(ops::kSoftmax, {{"x", v}}, std::move(sa))->output("y");
    Attributes r2;
    r2.set("in_order", Order(merged));
    r2.set("out_order", Order(grouped));
    r2.set("shape", gs);
    r2.set("follow", follow_gs);
    set_output(ctx, ctx.op(ops::kReshape, {{"x", v}}, std::move(r2), "split_axes")->output("y"), x.logical);
}

void prelu(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const Value& x = ctx.input(0);
    const std::size_t rank = x.logical.ndim();
    std::vector<bool> shared(rank, false);
    if (ctx.config().has("shared_axes"))
        for (auto a : ctx.config().get_ints("shared_axes")) {
            const auto p = a < 0 ? a + static_cast<std::int64_t>(rank) : a;
            if (p < 1 || p >= static_cast<std::int64_t>(rank)) ctx.fail_format("shared axis " + std::to_string(a) + " is out of range");
            shared[static_cast<std::size_t>(p)] = true;
        }
    ctx.expect_weights(1);
    const WeightArray& w = ctx.weight(0);
    Shape full, want;
    std::vector<Axis> axes;
    for (std::size_t i = 1; i < rank; ++i) {
        full.push_back(x.var->size(x.logical[i]));
        want.push_back(shared[i] ? 1 : full.back());
        axes.push_back(x.logical[i]);
    }
    if (w.shape != want) ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected " + shape_str(want));
    // alpha broadcast over the shared axes, laid out over every non-batch axis
    std::vector<float> alpha(static_cast<std::size_t>(numel(full)));
    for (std::size_t f = 0; f < alpha.size(); ++f) {
        std::int64_t rem = static_cast<std::int64_t>(f), src = 0, stride = 1;
        for (std::size_t d = full.size(); d-- > 0;) {
            const std::int64_t i = rem % full[d];
            rem /= full[d];
            src += (shared[d + 1] ? 0 : i) * stride;
            stride *= want[d];
        }
        alpha[f] = (*w.data)[static_cast<std::size_t>(src)];
    }
    Attributes a;
    a.set("batch_axis", x.logical[0]);
    NamedVars ins{{"x", x.var}, {"alpha", ctx.constant(ctx.layer_name() + "/alpha", Order(axes), full, std::move(alpha))}};
    set_output(ctx, ctx.op(ops::kPReLU, std::move(ins), std::move(a))->output("y"), x.logical);
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
    r.add_converter("keras", "PReLU", prelu);
}

}  // namespace graft::keras
