// Keras attention layers over (batch, time, features) inputs, without masks:
//   Attention           use_scale, score_mode dot | concat, causal (Keras 2 config) or the call
//                       argument use_causal_mask; inputs [query, value(, key)].
//   AdditiveAttention   use_scale (a weight per feature), causal / use_causal_mask.
//   MultiHeadAttention  num_heads, key_dim, value_dim, use_bias, output_shape (one size),
//                       attention_axes null or the time axis, use_causal_mask; inputs query, value
//                       (, key) (tf.keras 2 passes value/key as call keywords); weights named
//                       query/kernel, ... or, in a Keras 3 .keras archive, by sub-layer
//                       (query_dense/vars/0, ...); use_gate and sliding_window are refused.
// Dropout is an inference no-op. Masks (Keras masks, attention_mask tensors) and
// return_attention_scores are refused. So are Attention / AdditiveAttention over rank-2
// (batch, features) inputs: Keras 2 then scores every batch row against every other (a
// (batch, batch) score matrix, softmax across the batch), so an output row depends on the whole
// batch, which graft's per-row operators cannot express (Keras 3 rejects such inputs).
#include <cmath>

#include "frontend/keras/layers/layers.hpp"
#include "ops/op_types.hpp"

namespace graft::keras {

namespace {

void refuse_call_args(LayerContext& ctx) {
    if (ctx.call_flag("return_attention_scores", false))
        ctx.fail_unsupported("return_attention_scores=True is not supported");
    const Config k = ctx.call_kwargs();
    for (const char* m : {"attention_mask", "mask"})
        if (k.has(m))
            ctx.fail_unsupported(std::string("the call argument '") + m + "' (masked attention) is not supported");
}

Value seq_input(LayerContext& ctx, std::size_t i) {
    const Value& v = ctx.input(i);
    if (v.logical.ndim() != 3)
        ctx.fail_unsupported("input " + std::to_string(i) + " has rank " + std::to_string(v.logical.ndim()) +
                             "; graft supports attention over (batch, time, features) inputs");
    return ctx.relabel(v, OrderNTC);
}

float scalar_weight(LayerContext& ctx, const char* name) {
    const WeightArray& w = ctx.weight_named(name);
    if (numel(w.shape) != 1) ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected a scalar");
    return (*w.data)[0];
}

/// Attention and AdditiveAttention: y = softmax(score(q, k)) . v
void dense_attention(LayerContext& ctx, bool additive) {
    ctx.expect_inputs(2, 3);
    refuse_call_args(ctx);
    for (std::size_t i = 0; i < ctx.num_inputs(); ++i)
        if (ctx.input(i).logical.ndim() == 2)
            ctx.fail_unsupported("input " + std::to_string(i) + " " + ctx.input(i).var->describe() +
                                 " has rank 2 (batch, features): Keras then scores every batch row against every other "
                                 "((batch, batch) scores, softmax across the batch), so each output row depends on the "
                                 "whole batch; graft keeps batch rows independent. Give the inputs a time axis "
                                 "(batch, 1, features) to attend within each row");
    const auto& c = ctx.config();
    const Value q = seq_input(ctx, 0), v = seq_input(ctx, 1), k = ctx.num_inputs() == 3 ? seq_input(ctx, 2) : v;
    const std::int64_t dim = q.var->size(Axis::C);
    if (k.var->size(Axis::C) != dim)
        ctx.fail_shape("query " + q.var->describe() + " and key " + k.var->describe() + " differ in their last dimension");
    const bool use_scale = c.get_bool("use_scale", additive);
    const std::string mode = additive ? "additive" : c.get_string("score_mode", "dot");
    Attributes a;
    a.set("heads", std::int64_t{1});
    a.set("causal", c.get_bool("causal", false) || ctx.call_flag("use_causal_mask", false));
    NamedVars ins{{"q", q.var}, {"k", k.var}, {"v", v.var}};
    if (mode == "dot") {
        ctx.expect_weights(use_scale ? 1 : 0);
        a.set("score", "dot");
        a.set("scale", use_scale ? static_cast<double>(scalar_weight(ctx, "scale")) : 1.0);
    } else if (mode == "concat") {
        ctx.expect_weights(use_scale ? 2 : 1);
        a.set("score", "tanh");
        a.set("scale", use_scale ? static_cast<double>(scalar_weight(ctx, "scale")) : 1.0);
        const float cw = scalar_weight(ctx, "concat_score_weight");
        ins.emplace_back("a", ctx.constant(ctx.layer_name() + "/score_weights", OrderC, {dim},
                                           std::vector<float>(static_cast<std::size_t>(dim), cw)));
    } else if (mode == "additive") {
        ctx.expect_weights(use_scale ? 1 : 0);
        a.set("score", "tanh");
        a.set("scale", 1.0);
        if (use_scale) ins.emplace_back("a", ctx.constant(ctx.weight_named("scale"), OrderC, {dim}));
    } else {
        ctx.fail_unsupported("score_mode '" + mode + "' (expected dot or concat)");
    }
    set_output(ctx, ctx.op(ops::kAttention, std::move(ins), std::move(a))->output("y"), OrderNTC);
}

/// A MultiHeadAttention projection's weight: `name`/kernel or /bias as Keras 2 and legacy .h5 name
/// them, or the EinsumDense sub-layer's variable 0 (kernel) or 1 (bias) in a .keras archive, under
/// the attribute's name: `query_dense/vars/0` (Keras 3's properties) or `_query_dense/vars/0`
/// (tf.keras); the output projection is `attention_output` or `[_]output_dense`.
const WeightArray& projection_weight(LayerContext& ctx, const std::string& name, bool kernel) {
    const std::string sub = (name == "attention_output" ? std::string("output") : name) + "_dense/vars/" + (kernel ? "0" : "1");
    for (const std::string& suffix : {"/" + sub, "/_" + sub})
        for (std::size_t i = 0; i < ctx.num_weights(); ++i) {
            const std::string& n = ctx.weight(i).name;
            if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) return ctx.weight(i);
        }
    return ctx.weight_named(name + (kernel ? "/kernel" : "/bias"));
}

/// One EinsumDense projection of MultiHeadAttention as a Linear over the features: the kernel's
/// first `in_rank` dimensions are the input features, the rest the outputs (row-major flat).
Variable* project(LayerContext& ctx, const Value& x, const std::string& name, const Shape& kernel_shape, bool bias,
                  std::size_t in_rank = 1) {
    const WeightArray& w = projection_weight(ctx, name, true);
    if (w.shape != kernel_shape)
        ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected " + shape_str(kernel_shape));
    std::int64_t in = 1;
    for (std::size_t i = 0; i < in_rank; ++i) in *= kernel_shape[i];
    const std::int64_t out = numel(kernel_shape) / in;
    NamedVars ins{{"x", x.var}, {"w", ctx.graph().add_constant(ctx.graph().unique_name(w.name), OrderCN, {in, out}, w.data)}};
    if (bias) {
        const WeightArray& b = projection_weight(ctx, name, false);
        if (numel(b.shape) != out) ctx.fail_shape("weight '" + b.name + "' has shape " + shape_str(b.shape) + ", expected " + std::to_string(out) + " values");
        ins.emplace_back("b", ctx.graph().add_constant(ctx.graph().unique_name(b.name), OrderC, {out}, b.data));
    }
    Attributes a;
    a.set("axis", Axis::C);
    return ctx.op(ops::kLinear, std::move(ins), std::move(a), name)->output("y");
}

void multi_head_attention(LayerContext& ctx) {
    ctx.expect_inputs(2, 3);
    refuse_call_args(ctx);
    const auto& c = ctx.config();
    const Value q = seq_input(ctx, 0), v = seq_input(ctx, 1), k = ctx.num_inputs() == 3 ? seq_input(ctx, 2) : v;
    const std::int64_t H = c.get_size("num_heads"), kd = c.get_size("key_dim");
    const std::int64_t vd = c.has("value_dim") ? c.get_size("value_dim") : kd;
    if (c.has("attention_axes")) {
        auto ax = c.get_ints("attention_axes");
        if (!(ax.size() == 1 && (ax[0] == 1 || ax[0] == -2)))
            ctx.fail_unsupported("attention_axes " + shape_str(ax) + " (graft attends over the time axis of rank-3 inputs)");
    }
    std::int64_t O = q.var->size(Axis::C);
    if (c.has("output_shape")) {
        auto os = c.get_ints("output_shape");
        if (os.size() != 1) ctx.fail_unsupported("output_shape " + shape_str(os) + " with more than one dimension");
        O = checked::in_range(ctx.where(), "config 'output_shape'", os[0]);
    }
    if (c.get_bool("use_gate", false))
        ctx.fail_unsupported("use_gate=True (a gating projection of the query multiplies the attention output)");
    if (c.has("sliding_window") && !c.is_null("sliding_window"))
        ctx.fail_unsupported("sliding_window (attention restricted to a window of positions)");
    const bool bias = c.get_bool("use_bias", true);
    ctx.expect_weights(bias ? 8 : 4);
    const Value qp{project(ctx, q, "query", {q.var->size(Axis::C), H, kd}, bias), OrderNTC};
    const Value kp{project(ctx, k, "key", {k.var->size(Axis::C), H, kd}, bias), OrderNTC};
    const Value vp{project(ctx, v, "value", {v.var->size(Axis::C), H, vd}, bias), OrderNTC};
    Attributes a;
    a.set("heads", H);
    a.set("score", "dot");
    a.set("scale", 1.0 / std::sqrt(static_cast<double>(kd)));
    a.set("causal", ctx.call_flag("use_causal_mask", false));
    const Value att{ctx.op(ops::kAttention, {{"q", qp.var}, {"k", kp.var}, {"v", vp.var}}, std::move(a), "attention")->output("y"), OrderNTC};
    set_output(ctx, project(ctx, att, "attention_output", {H, vd, O}, bias, 2), OrderNTC);
}

}  // namespace

void register_attention(Registry& r) {
    r.add_converter("keras", "Attention", [](LayerContext& c) { dense_attention(c, false); });
    r.add_converter("keras", "AdditiveAttention", [](LayerContext& c) { dense_attention(c, true); });
    r.add_converter("keras", "MultiHeadAttention", multi_head_attention);
}

}  // namespace graft::keras
