// BatchNormalization, LayerNormalization (opset 17), InstanceNormalization and LRN as graft's
// BatchNormalization, LayerNorm, GroupNorm (one group per channel) and LRN;
// MeanVarianceNormalization and BatchNormalization's training mode (statistics of the batch
// itself) as reductions and elementwise ops.
#include "frontend/onnx/host_eval.hpp"
#include "frontend/onnx/ops/ops.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

using i64 = std::int64_t;

/// Input `i`, a known constant of `n` values, as a 1-D constant over C.
Variable* per_channel(NodeContext& ctx, std::size_t i, i64 n, const char* what) {
    const HostTensor* t = ctx.known(i);
    if (!t) ctx.fail_needs_value(i, std::string(what) + " computed when the model runs");
    if (t->numel() != n) ctx.fail_shape(std::string(what) + " has " + std::to_string(t->numel()) + " values, expected " + std::to_string(n));
    return ctx.constant(ctx.layer_name() + "/" + what, OrderC, {n}, t->floats());
}

/// x's mean and biased (population) variance over `red`, dimensions kept, and x - mean.
struct Moments {
    Value mean, centred, var;
};

Moments moments(NodeContext& ctx, const Value& x, const std::vector<i64>& red) {
    Moments m;
    m.mean = reduce(ctx, x, "mean", red, true, "mean");
    m.centred = binary(ctx, "Sub", x, m.mean, "centred");
    m.var = reduce(ctx, binary(ctx, "Mul", m.centred, m.centred, "squared"), "mean", red, true, "var");
    return m;
}

Value sqrt_of(NodeContext& ctx, const Value& v, float eps, const char* suffix) {
    return activation(ctx, binary(ctx, "Add", v, scalar(ctx, eps, std::string(suffix) + "_eps"), std::string(suffix) + "_plus_eps"), "sqrt", 0, -1,
                      0, suffix);
}

/// training_mode 1: normalizes with the batch's own statistics over every axis but C (ONNX's
/// reference), and gives running_mean / running_var = input * momentum + batch's * (1 - momentum).
void batch_norm_training(NodeContext& ctx) {
    const Value& x = ctx.input(0);
    const std::size_t r = x.logical.ndim();
    const i64 C = logical_shape(x)[1];
    std::vector<i64> red{0};
    for (std::size_t i = 2; i < r; ++i) red.push_back(static_cast<i64>(i));
    const Moments m = moments(ctx, x, red);
    const auto eps = static_cast<float>(ctx.config().get_float("epsilon", 1e-5));
    Shape cs(r, 1);  // [1, C, 1, ...]: per channel, broadcast over x
    cs[1] = C;
    const Value k = binary(ctx, "Div", reshape(ctx, ctx.input(1), cs, "scale_c"), sqrt_of(ctx, m.var, eps, "sd"), "k");
    ctx.set_output(0, binary(ctx, "Add", binary(ctx, "Mul", m.centred, k, "scaled"), reshape(ctx, ctx.input(2), cs, "b_c"), "").var, x.logical);
    const auto momentum = static_cast<float>(ctx.config().get_float("momentum", 0.9));
    for (std::size_t out = 1; out <= 2; ++out) {
        if (!ctx.wants_output(out)) continue;
        const std::string what = out == 1 ? "running_mean" : "running_var";
        const Value batch = reshape(ctx, out == 1 ? m.mean : m.var, {C}, what + "_batch");
        const Value kept = binary(ctx, "Mul", ctx.input(out + 2), scalar(ctx, momentum, what + "_momentum"), what + "_kept");
        const Value v = binary(ctx, "Add", kept, binary(ctx, "Mul", batch, scalar(ctx, 1.f - momentum, what + "_rate"), what + "_new"), what);
        ctx.set_output(out, v.var, v.logical);
    }
}

void batch_norm(NodeContext& ctx) {
    expect_inputs(ctx, 5, 5);
    if (ctx.config().get_int("training_mode", 0) != 0) {
        if (ctx.input(0).logical.ndim() < 2) ctx.fail_shape("input of rank " + std::to_string(ctx.input(0).logical.ndim()) + ", expected at least 2");
        return batch_norm_training(ctx);
    }
    expect_one_output(ctx);
    const Value& x = ctx.input(0);
    if (x.logical.ndim() < 2) ctx.fail_shape("input of rank " + std::to_string(x.logical.ndim()) + ", expected at least 2");
    const i64 C = logical_shape(x)[1];
    bool known = true;
    for (std::size_t i = 1; i < 5; ++i) known = known && ctx.known(i);
    if (!known) {  // statistics computed when the model runs: (x - mean) * scale / sqrt(var + eps) + B
        auto channel = [&](std::size_t i, const char* name) {  // [C] as [C, 1, ...] to broadcast over x's axis 1
            Shape s(x.logical.ndim() - 1, 1);
            s[0] = C;
            return reshape(ctx, ctx.input(i), s, name);
        };
        const auto eps = static_cast<float>(ctx.config().get_float("epsilon", 1e-5));
        const Value sd = activation(ctx, binary(ctx, "Add", channel(4, "var"), scalar(ctx, eps, "epsilon"), "var_eps"), "sqrt", 0, -1, 0, "sd");
        const Value k = binary(ctx, "Div", channel(1, "scale"), sd, "k");
        const Value centred = binary(ctx, "Sub", x, channel(3, "mean"), "centred");
        return ctx.set_outputs({binary(ctx, "Add", binary(ctx, "Mul", centred, k, "scaled"), channel(2, "B"), "")});
    }
    NamedVars ins{{"x", x.var},
                  {"mean", per_channel(ctx, 3, C, "mean")},
                  {"var", per_channel(ctx, 4, C, "var")},
                  {"gamma", per_channel(ctx, 1, C, "scale")},
                  {"beta", per_channel(ctx, 2, C, "B")}};
    Attributes a;
    a.set("axis", x.logical[1]);
    a.set("epsilon", ctx.config().get_float("epsilon", 1e-5));
    ctx.set_outputs({emit(ctx, ops::kBatchNormalization, std::move(ins), std::move(a), x.logical)});
}

void layer_norm(NodeContext& ctx) {
    expect_inputs(ctx, 2, 3);
    if (ctx.config().get_int("stash_type", 1) != 1) ctx.fail_unsupported("stash_type other than float32");
    const Value& x = ctx.input(0);
    const Shape xs = logical_shape(x);
    const std::size_t axis = axis_index(ctx, ctx.config().get_int("axis", -1), xs.size());
    const Shape dims(xs.begin() + static_cast<std::ptrdiff_t>(axis), xs.end());
    for (auto d : dims)
        if (d == kDynamic) ctx.fail_unsupported("normalizing over the dynamic batch dimension");
    const Order axes(std::vector<Axis>(x.logical.axes().begin() + static_cast<std::ptrdiff_t>(axis), x.logical.axes().end()));
    NamedVars ins{{"x", x.var}};
    bool runtime = false;  // scale or B computed when the model runs: applied after, broadcast from the right
    for (std::size_t i = 1; i <= 2; ++i) {
        if (!ctx.has_input(i)) continue;
        const HostTensor* t = ctx.known(i);
        const char* what = i == 1 ? "scale" : "B";
        if (!t) runtime = true;
        else ins.emplace_back(i == 1 ? "gamma" : "beta", ctx.constant(ctx.layer_name() + "/" + what, axes, dims, host_expand(*t, dims, ctx.where() + ": " + what)));
    }
    if (runtime) ins.resize(1);
    Attributes a;
    a.set("axes", axes);
    a.set("epsilon", ctx.config().get_float("epsilon", 1e-5));
    Value y = emit(ctx, ops::kLayerNorm, std::move(ins), std::move(a), x.logical);
    if (runtime) {
        y = binary(ctx, "Mul", y, ctx.input(1), "scale");
        if (ctx.has_input(2)) y = binary(ctx, "Add", y, ctx.input(2), "shift");
    }
    ctx.set_outputs({y});
    if (ctx.wants_output(1) || ctx.wants_output(2)) {  // the statistics too: Mean, InvStdDev (kept dimensions)
        std::vector<i64> red;
        for (std::size_t i = axis; i < xs.size(); ++i) red.push_back(static_cast<i64>(i));
        const Moments m = moments(ctx, x, red);
        const Value sd = sqrt_of(ctx, m.var, static_cast<float>(ctx.config().get_float("epsilon", 1e-5)), "sd");
        if (ctx.wants_output(1)) ctx.set_output(1, m.mean.var, m.mean.logical);
        if (ctx.wants_output(2)) {
            const Value inv = activation(ctx, sd, "reciprocal", 0, -1, 0, "inv_sd");
            ctx.set_output(2, inv.var, inv.logical);
        }
    }
}

void instance_norm(NodeContext& ctx) {
    expect_inputs(ctx, 3, 3);
    const Value& x = ctx.input(0);
    if (x.logical.ndim() < 3) ctx.fail_shape("input of rank " + std::to_string(x.logical.ndim()) + ", expected at least 3");
    const i64 C = logical_shape(x)[1];
    const bool known = ctx.known(1) && ctx.known(2);
    NamedVars ins{{"x", x.var}};
    if (known) ins = {{"x", x.var}, {"gamma", per_channel(ctx, 1, C, "scale")}, {"beta", per_channel(ctx, 2, C, "B")}};
    Attributes a;
    a.set("batch_axis", x.logical[0]);
    a.set("axis", x.logical[1]);
    a.set("groups", C);
    a.set("epsilon", ctx.config().get_float("epsilon", 1e-5));
    Value y = emit(ctx, ops::kGroupNorm, std::move(ins), std::move(a), x.logical);
    if (!known) {  // scale and B computed when the model runs: per channel, after
        Shape s(x.logical.ndim() - 1, 1);
        s[0] = C;
        y = binary(ctx, "Mul", y, reshape(ctx, ctx.input(1), s, "scale_c"), "scale");
        y = binary(ctx, "Add", y, reshape(ctx, ctx.input(2), s, "b_c"), "shift");
    }
    ctx.set_outputs({y});
}

/// (x - mean) / (sqrt(variance) + 1e-9) over `axes` (default N and the spatial axes of NCHW), as
/// ONNX's function body defines it.
void mean_variance_norm(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    const Value& x = ctx.input(0);
    const std::size_t r = x.logical.ndim();
    std::vector<i64> axes = ctx.config().has("axes") ? ctx.config().get_ints("axes") : std::vector<i64>{0, 2, 3};
    for (auto& a : axes) a = static_cast<i64>(axis_index(ctx, a, r));
    const Moments m = moments(ctx, x, axes);
    const Value sd = activation(ctx, m.var, "sqrt", 0, -1, 0, "sd");
    ctx.set_outputs({binary(ctx, "Div", m.centred, binary(ctx, "Add", sd, scalar(ctx, 1e-9f, "eps"), "sd_eps"), "")});
}

/// LRN of [N, C, D1, ...] across C.
void lrn(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    const Value x = ctx.input(0);
    if (x.logical.ndim() < 2) ctx.fail_unsupported("a rank-" + std::to_string(x.logical.ndim()) + " input (expected N, C, ...)");
    const auto& c = ctx.config();
    const i64 size = c.get_int("size");
    if (size < 1) ctx.fail_format("size " + std::to_string(size) + " (expected at least 1)");
    Attributes a;
    a.set("axis", x.logical[1]);
    a.set("size", size);
    a.set("alpha", c.get_float("alpha", 1e-4));
    a.set("beta", c.get_float("beta", 0.75));
    a.set("bias", c.get_float("bias", 1.0));
    ctx.set_outputs({emit(ctx, ops::kLRN, {{"x", x.var}}, std::move(a), x.logical)});
}

}  // namespace

void register_normalization(Registry& r) {
    add(r, "BatchNormalization", batch_norm);
    add(r, "LayerNormalization", layer_norm);
    add(r, "InstanceNormalization", instance_norm);
    add(r, "LRN", lrn);
    add(r, "MeanVarianceNormalization", mean_variance_norm);
}

}  // namespace graft::onnx
