// Keras normalization layers at inference:
//   BatchNormalization   one axis (BatchNormalization op) or an axis list (folded into an Affine
//                        op; tf.keras keeps such parameters with the input's rank, 1 elsewhere);
//                        center / scale may be off.
//   LayerNormalization   any axes, center / scale, epsilon (rms_scaling refused).
//   GroupNormalization   groups (-1: one per channel), axis, center / scale, epsilon.
//   UnitNormalization    axis (int or list): x / sqrt(max(sum x^2, 1e-12)).
//   Rescaling            y = x * scale + offset (scalars).
//   Normalization        (tf.keras 2.x preprocessing) weights mean, variance, count or constant
//                        mean/variance in the config; axis (list, or null for one scalar);
//                        y = (x - mean) / max(sqrt(var), 1e-7), invert: mean + x * max(sqrt(var), 1e-7).
#include <algorithm>
#include <cmath>
#include <functional>

#include "frontend/keras/layers/layers.hpp"
#include "ops/op_types.hpp"

namespace graft::keras {

namespace {

/// The config's axis (int or list; `fallback` when absent) as axes of x, in Keras position order.
std::vector<Axis> sorted_axes(LayerContext& ctx, const Value& x, const char* key, std::vector<std::int64_t> fallback) {
    auto axes = ctx.config().has(key) ? ctx.config().get_ints(key) : fallback;
    const auto rank = static_cast<std::int64_t>(x.logical.ndim());
    std::vector<std::int64_t> pos;
    for (auto a : axes) {
        keras_axis(ctx, x, a);  // range check, names the layer
        const std::int64_t p = a < 0 ? a + rank : a;
        if (std::find(pos.begin(), pos.end(), p) != pos.end()) ctx.fail_format("axis " + std::to_string(a) + " is listed twice");
        pos.push_back(p);
    }
    std::sort(pos.begin(), pos.end());
    std::vector<Axis> out;
    for (auto p : pos) out.push_back(x.logical[static_cast<std::size_t>(p)]);
    return out;
}

std::int64_t size_over(const Value& x, const std::vector<Axis>& axes) {
    std::int64_t k = 1;
    for (const auto& a : axes) k *= x.var->size(a);
    return k;
}

/// A weight holding `k` values (Keras may keep singleton dimensions), as a flat constant.
ConstantVariable* flat_weight(LayerContext& ctx, const WeightArray& w, std::int64_t k) {
    if (numel(w.shape) != k)
        ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + " (" + std::to_string(numel(w.shape)) +
                       " values), expected " + std::to_string(k) + " values from the layer's config and input");
    return ctx.graph().add_constant(ctx.graph().unique_name(w.name), Order{Axis("K")}, {k}, w.data);
}

Value affine(LayerContext& ctx, const Value& x, const std::vector<Axis>& axes, std::vector<float> scale, std::vector<float> shift) {
    std::vector<Axis> names;
    Shape shape;
    for (const auto& a : axes) names.push_back(a), shape.push_back(x.var->size(a));
    Order o(names);
    std::vector<std::string> attr;
    for (const auto& a : axes) attr.push_back(a.name());
    Attributes at;
    at.set("axes", attr);
    NamedVars ins{{"x", x.var},
                  {"scale", ctx.constant(ctx.layer_name() + "/scale", o, shape, std::move(scale))},
                  {"shift", ctx.constant(ctx.layer_name() + "/shift", o, shape, std::move(shift))}};
    return Value{ctx.op(ops::kAffine, std::move(ins), std::move(at))->output("y"), x.logical};
}

std::vector<std::string> names_of(const std::vector<Axis>& axes) {
    std::vector<std::string> out;
    for (const auto& a : axes) out.push_back(a.name());
    return out;
}

void batch_norm(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const auto& c = ctx.config();
    const Value& x = ctx.input(0);
    if (c.get_int("mode", 0) != 0) ctx.fail_unsupported("Keras 1 BatchNormalization mode " + std::to_string(c.get_int("mode")) + " (only mode 0 is)");
    const auto axes = sorted_axes(ctx, x, "axis", {-1});
    const bool scale = c.get_bool("scale", true), center = c.get_bool("center", true);
    ctx.expect_weights((scale ? 1u : 0u) + (center ? 1u : 0u) + 2u);
    if (axes.size() == 1) {
        const std::int64_t ch = x.var->size(axes[0]);
        std::size_t i = 0;
        NamedVars ins{{"x", x.var}};
        if (scale) ins.emplace_back("gamma", ctx.constant(ctx.weight(i++), OrderC, {ch}));
        if (center) ins.emplace_back("beta", ctx.constant(ctx.weight(i++), OrderC, {ch}));
        ins.emplace_back("mean", ctx.constant(ctx.weight(i++), OrderC, {ch}));
        ins.emplace_back("var", ctx.constant(ctx.weight(i++), OrderC, {ch}));
        Attributes a;
        a.set("axis", axes[0]);
        a.set("epsilon", c.get_float("epsilon", 1e-3));
        set_output(ctx, ctx.op(ops::kBatchNormalization, std::move(ins), std::move(a))->output("y"), x.logical);
        return;
    }
    // Several axes: parameters over those axes (Keras keeps them at the input's rank with 1
    // elsewhere, which is the same flat data), folded here into y = x * s + t.
    const std::int64_t k = size_over(x, axes);
    auto values = [&](std::size_t i) {
        const WeightArray& w = ctx.weight(i);
        if (numel(w.shape) != k) ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected " + std::to_string(k) + " values");
        return *w.data;
    };
    std::size_t i = 0;
    std::vector<float> gamma = scale ? values(i++) : std::vector<float>(static_cast<std::size_t>(k), 1.f);
    std::vector<float> beta = center ? values(i++) : std::vector<float>(static_cast<std::size_t>(k), 0.f);
    std::vector<float> mean = values(i++), var = values(i++);
    const double eps = c.get_float("epsilon", 1e-3);
    std::vector<float> s(gamma.size()), t(gamma.size());
    for (std::size_t j = 0; j < s.size(); ++j) {
        const double sc = gamma[j] / std::sqrt(static_cast<double>(var[j]) + eps);
        s[j] = static_cast<float>(sc);
        t[j] = static_cast<float>(beta[j] - mean[j] * sc);
    }
    ctx.set_outputs({affine(ctx, x, axes, std::move(s), std::move(t))});
}

void layer_norm(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const auto& c = ctx.config();
    const Value& x = ctx.input(0);
    if (c.get_bool("rms_scaling", false)) ctx.fail_unsupported("rms_scaling=True is not supported");
    const auto axes = sorted_axes(ctx, x, "axis", {-1});
    const std::int64_t k = size_over(x, axes);
    const bool scale = c.get_bool("scale", true), center = c.get_bool("center", true);
    ctx.expect_weights((scale ? 1u : 0u) + (center ? 1u : 0u));
    NamedVars ins{{"x", x.var}};
    std::size_t i = 0;
    // Keras reshapes gamma/beta (shape: the axes as listed) to the broadcast shape, so their flat
    // data runs over the axes in position order.
    if (scale) ins.emplace_back("gamma", flat_weight(ctx, ctx.weight(i++), k));
    if (center) ins.emplace_back("beta", flat_weight(ctx, ctx.weight(i++), k));
    Attributes a;
    a.set("axes", names_of(axes));
    a.set("epsilon", c.get_float("epsilon", 1e-3));
    set_output(ctx, ctx.op(ops::kLayerNorm, std::move(ins), std::move(a))->output("y"), x.logical);
}

void group_norm(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const auto& c = ctx.config();
    const Value& x = ctx.input(0);
    const Axis axis = keras_axis(ctx, x, c.get_int("axis", -1));
    const std::int64_t ch = x.var->size(axis);
    std::int64_t groups = c.get_int("groups", 32);
    if (groups == -1) groups = ch;
    if (groups < 1 || ch % groups != 0)
        ctx.fail_format("groups " + std::to_string(groups) + " must divide the " + std::to_string(ch) + " channels");
    const bool scale = c.get_bool("scale", true), center = c.get_bool("center", true);
    ctx.expect_weights((scale ? 1u : 0u) + (center ? 1u : 0u));
    NamedVars ins{{"x", x.var}};
    std::size_t i = 0;
    if (scale) ins.emplace_back("gamma", ctx.constant(ctx.weight(i++), OrderC, {ch}));
    if (center) ins.emplace_back("beta", ctx.constant(ctx.weight(i++), OrderC, {ch}));
    Attributes a;
    a.set("batch_axis", x.logical[0]);
    a.set("axis", axis);
    a.set("groups", groups);
    a.set("epsilon", c.get_float("epsilon", 1e-3));
    set_output(ctx, ctx.op(ops::kGroupNorm, std::move(ins), std::move(a))->output("y"), x.logical);
}

void unit_norm(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const Value& x = ctx.input(0);
    Attributes a;
    a.set("axes", names_of(sorted_axes(ctx, x, "axis", {-1})));
    a.set("epsilon", 1e-12);
    set_output(ctx, ctx.op(ops::kL2Normalize, {{"x", x.var}}, std::move(a))->output("y"), x.logical);
}

float scalar_config(LayerContext& ctx, const char* key, double fallback) {
    const auto& c = ctx.config();
    if (c.has(key) && !c.is_number(key))
        ctx.fail_unsupported(std::string("'") + key + "' must be a single number (per-channel values are not supported)");
    return static_cast<float>(c.get_float(key, fallback));
}

void rescaling(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const Value& x = ctx.input(0);
    ctx.set_outputs({affine(ctx, x, {}, {scalar_config(ctx, "scale", 1.0)}, {scalar_config(ctx, "offset", 0.0)})});
}

/// A config list of numbers (Normalization's constant mean/variance), or a single number.
std::vector<float> numbers(LayerContext& ctx, const char* key) {
    std::vector<float> out;
    std::function<void(const Config&, int)> walk = [&](const Config& e, int depth) {
        if (depth > 8) ctx.fail_format(std::string("'") + key + "' is nested too deeply");
        const Config::Kind k = e.kind();
        if (k == Config::Kind::integer || k == Config::Kind::number) out.push_back(static_cast<float>(e.as_float()));
        else if (k == Config::Kind::list) for (std::size_t i = 0; i < e.size(); ++i) walk(e.at(i), depth + 1);
        else ctx.fail_format(std::string("'") + key + "' should hold numbers");
    };
    walk(ctx.config().get(key), 0);
    return out;
}

void normalization(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const auto& c = ctx.config();
    const Value& x = ctx.input(0);
    std::vector<Axis> axes;
    if (!c.has("axis")) {
        if (c.is_null("axis")) axes = {};  // axis=None: one mean and variance
        else axes = sorted_axes(ctx, x, "axis", {-1});
    } else {
        axes = sorted_axes(ctx, x, "axis", {-1});
    }
    const std::int64_t k = size_over(x, axes);
    std::vector<float> mean, var;
    if (c.has("mean") || c.has("variance")) {
        if (!c.has("mean") || !c.has("variance")) ctx.fail_format("has only one of 'mean' and 'variance'");
        mean = numbers(ctx, "mean"), var = numbers(ctx, "variance");
        // a single number broadcasts over the kept axes
        if (mean.size() == 1) mean.assign(static_cast<std::size_t>(k), mean[0]);
        if (var.size() == 1) var.assign(static_cast<std::size_t>(k), var[0]);
    } else {
        if (ctx.num_weights() != 3 && ctx.num_weights() != 2) ctx.expect_weights(3);
        auto get = [&](const char* n) {
            const WeightArray& w = ctx.weight_named(n);
            if (numel(w.shape) != k)
                ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected " + std::to_string(k) + " values");
            return *w.data;
        };
        mean = get("mean"), var = get("variance");
    }
    if (static_cast<std::int64_t>(mean.size()) != k || static_cast<std::int64_t>(var.size()) != k)
        ctx.fail_shape("mean/variance hold " + std::to_string(mean.size()) + "/" + std::to_string(var.size()) + " values, expected " +
                       std::to_string(k));
    const bool invert = c.get_bool("invert", false);
    std::vector<float> s(mean.size()), t(mean.size());
    for (std::size_t j = 0; j < s.size(); ++j) {
        const float sd = std::max(std::sqrt(var[j]), 1e-7f);  // backend.epsilon()
        if (invert) s[j] = sd, t[j] = mean[j];
        else s[j] = static_cast<float>(1.0 / sd), t[j] = static_cast<float>(-mean[j] / static_cast<double>(sd));
    }
    ctx.set_outputs({affine(ctx, x, axes, std::move(s), std::move(t))});
}

}  // namespace

void register_normalization(Registry& r) {
    r.add_converter("keras", "BatchNormalization", batch_norm);
    r.add_converter("keras", "LayerNormalization", layer_norm);
    r.add_converter("keras", "GroupNormalization", group_norm);
    r.add_converter("keras", "UnitNormalization", unit_norm);
    r.add_converter("keras", "Rescaling", rescaling);
    r.add_converter("keras", "Normalization", normalization);
}

}  // namespace graft::keras
