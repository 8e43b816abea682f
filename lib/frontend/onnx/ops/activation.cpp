// ONNX activations and unary math as graft's Activation op (graft_rt/act.hpp's table), Softmax /
// LogSoftmax / Hardmax, PRelu and Clip.
#include <cmath>
#include <limits>

#include "frontend/onnx/host_eval.hpp"
#include "frontend/onnx/ops/ops.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

Value activation(NodeContext& ctx, const Value& x, const std::string& fn, double alpha, double max_value, double threshold,
                 const std::string& suffix) {
    Attributes a;
    a.set("activation", fn);
    a.set("alpha", alpha);
    a.set("max_value", max_value);
    a.set("threshold", threshold);
    return emit(ctx, ops::kActivation, {{"x", x.var}}, std::move(a), x.logical, suffix);
}

namespace {

/// Neg and Abs of integers known while converting stay known: shape arithmetic (LayerNormalization's
/// function body negates an axis to size a ConstantOfShape) needs them as values, not as a runtime op.
bool integer_unary(NodeContext& ctx, const std::string& fn) {
    const HostTensor* k = ctx.known(0);
    if (!k || k->is_float() || (fn != "neg" && fn != "abs")) return false;
    HostTensor zero;
    zero.kind = HostTensor::Kind::integer;
    zero.i = {0};
    if (fn == "neg") {
        ctx.set_known_output(0, host_binary("Sub", zero, *k, ctx.where()));
        return true;
    }
    const HostTensor negated = host_binary("Sub", zero, *k, ctx.where());
    ctx.set_known_output(0, host_binary("Max", *k, negated, ctx.where()));
    return true;
}

void unary(NodeContext& ctx, const std::string& fn, double alpha = 0) {
    expect_inputs(ctx, 1, 1);
    if (integer_unary(ctx, fn)) return;
    ctx.set_outputs({activation(ctx, ctx.input(0), fn, alpha)});
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

// Each ONNX op with the name of graft's activation and its attribute defaults.
#define GRAFT_ONNX_UNARY(OP, FN) \
    void OP(NodeContext& ctx) { unary(ctx, FN); }
GRAFT_ONNX_UNARY(relu, "relu")
GRAFT_ONNX_UNARY(sigmoid, "sigmoid")
GRAFT_ONNX_UNARY(tanh_, "tanh")
GRAFT_ONNX_UNARY(softplus, "softplus")
GRAFT_ONNX_UNARY(softsign, "softsign")
GRAFT_ONNX_UNARY(erf, "erf")
GRAFT_ONNX_UNARY(hard_swish, "hard_swish")
GRAFT_ONNX_UNARY(abs_, "abs")
GRAFT_ONNX_UNARY(neg, "neg")
GRAFT_ONNX_UNARY(exp_, "exponential")
GRAFT_ONNX_UNARY(log_, "log")
GRAFT_ONNX_UNARY(sqrt_, "sqrt")
GRAFT_ONNX_UNARY(reciprocal, "reciprocal")
GRAFT_ONNX_UNARY(floor_, "floor")
GRAFT_ONNX_UNARY(ceil_, "ceil")
GRAFT_ONNX_UNARY(round_, "round")
GRAFT_ONNX_UNARY(sign, "sign")
GRAFT_ONNX_UNARY(sin_, "sin")
GRAFT_ONNX_UNARY(cos_, "cos")
GRAFT_ONNX_UNARY(tan_, "tan")
GRAFT_ONNX_UNARY(asin_, "asin")
GRAFT_ONNX_UNARY(acos_, "acos")
GRAFT_ONNX_UNARY(atan_, "atan")
GRAFT_ONNX_UNARY(sinh_, "sinh")
GRAFT_ONNX_UNARY(cosh_, "cosh")
GRAFT_ONNX_UNARY(asinh_, "asinh")
GRAFT_ONNX_UNARY(acosh_, "acosh")
GRAFT_ONNX_UNARY(atanh_, "atanh")
#undef GRAFT_ONNX_UNARY

void elu(NodeContext& ctx) { unary(ctx, "elu", ctx.config().get_float("alpha", 1.0)); }
void leaky_relu(NodeContext& ctx) { unary(ctx, "leaky_relu", ctx.config().get_float("alpha", 0.01)); }
void thresholded_relu(NodeContext& ctx) { unary(ctx, "thresholded_relu", ctx.config().get_float("alpha", 1.0)); }
void celu(NodeContext& ctx) { unary(ctx, "celu", ctx.config().get_float("alpha", 1.0)); }
void shrink(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    ctx.set_outputs({activation(ctx, ctx.input(0), "shrink", ctx.config().get_float("lambd", 0.5), -1, ctx.config().get_float("bias", 0.0))});
}

void selu(NodeContext& ctx) {
    const double alpha = ctx.config().get_float("alpha", 1.67326319217681884765625);
    const double gamma = ctx.config().get_float("gamma", 1.05070102214813232421875);
    if (near(alpha, 1.67326319217681884765625) && near(gamma, 1.05070102214813232421875)) return unary(ctx, "selu");
    expect_inputs(ctx, 1, 1);  // gamma * elu(x, alpha)
    const Value e = activation(ctx, ctx.input(0), "elu", alpha, -1, 0, "elu");
    ctx.set_outputs({binary(ctx, "Mul", e, scalar(ctx, static_cast<float>(gamma), "gamma"), "")});
}

/// Gelu (opset 20; also what patterns.cpp makes of the exporters' Erf chain): exact or tanh.
void gelu(NodeContext& ctx) {
    const std::string approximate = ctx.config().get_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh")
        ctx.fail_unsupported("approximate '" + approximate + "', expected 'none' or 'tanh'");
    unary(ctx, approximate == "none" ? "gelu" : "gelu_tanh");
}

/// Swish (opset 24; also what patterns.cpp makes of Sigmoid(x) * x): x * sigmoid(alpha x).
void swish(NodeContext& ctx) {
    const double alpha = ctx.config().get_float("alpha", 1.0);
    if (!near(alpha, 1.0)) ctx.fail_unsupported("Swish with alpha " + std::to_string(alpha) + " (graft's swish has alpha 1)");
    unary(ctx, "swish");
}

void hard_sigmoid(NodeContext& ctx) {
    const double alpha = ctx.config().get_float("alpha", 0.2), beta = ctx.config().get_float("beta", 0.5);
    if (near(alpha, 0.2) && near(beta, 0.5)) return unary(ctx, "hard_sigmoid");
    if (near(alpha, 1.0 / 6.0) && near(beta, 0.5)) return unary(ctx, "hard_sigmoid_keras3");
    expect_inputs(ctx, 1, 1);
    ctx.set_outputs({activation(ctx, ctx.input(0), "hard_sigmoid_general", alpha, -1, beta)});
}

/// Clip: attributes min / max before opset 11, optional inputs min / max (known) since.
void clip(NodeContext& ctx) {
    expect_inputs(ctx, 1, 3);
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
    if (ctx.opset() < 11) {
        lo = ctx.config().get_float("min", lo);
        hi = ctx.config().get_float("max", hi);
    } else {
        bool known = true;
        for (std::size_t i = 1; i <= 2; ++i) {
            if (!ctx.has_input(i)) continue;
            const HostTensor* t = ctx.known(i);
            if (t && t->numel() != 1) ctx.fail_shape(std::string(i == 1 ? "min" : "max") + " is not a scalar");
            if (t) (i == 1 ? lo : hi) = t->floats()[0];
            else known = false;
        }
        if (!known) {  // bounds computed when the model runs: max(x, min), then min(., max)
            Value y = ctx.input(0);
            if (ctx.has_input(1)) y = binary(ctx, "Max", y, ctx.input(1), "lo");
            if (ctx.has_input(2)) y = binary(ctx, "Min", y, ctx.input(2), "hi");
            return ctx.set_outputs({y});
        }
    }
    if (lo == 0 && std::isinf(hi)) return unary(ctx, "relu");
    if (lo == 0 && hi >= 0) return ctx.set_outputs({activation(ctx, ctx.input(0), "relu_general", 0, hi)});
    // clip's absent bounds are +-FLT_MAX (attributes hold no infinities).
    const double big = std::numeric_limits<float>::max();
    ctx.set_outputs({activation(ctx, ctx.input(0), "clip", std::max(lo, -big), std::min(hi, big))});
}

/// Softmax, LogSoftmax, Hardmax (graft's op `type`): along `axis` (opset 13+, default -1); before
/// 13 over the input flattened to 2-D at `axis` (default 1).
Value softmax_of(NodeContext& ctx, const Value& x, const char* type = ops::kSoftmax) {
    const std::size_t rank = x.logical.ndim();
    const bool legacy = ctx.opset() < 13;
    const std::size_t ax = axis_index(ctx, ctx.config().get_int("axis", legacy ? 1 : -1), rank);
    Attributes a;
    if (!legacy || ax + 1 == rank) {
        a.set("axis", x.logical[ax]);
        return emit(ctx, type, {{"x", x.var}}, std::move(a), x.logical);
    }
    const Shape s = logical_shape(x);
    std::int64_t outer = 1, inner = 1;
    for (std::size_t i = 0; i < rank; ++i) (i < ax ? outer : inner) *= s[i];
    const Value flat = reshape(ctx, x, {outer, inner}, "flat");
    a.set("axis", flat.logical[1]);
    return reshape(ctx, emit(ctx, type, {{"x", flat.var}}, std::move(a), flat.logical, type == ops::kHardmax ? "hardmax" : "softmax"), s,
                   "unflat");
}

void softmax(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    ctx.set_outputs({softmax_of(ctx, ctx.input(0))});
}

void hardmax(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    ctx.set_outputs({softmax_of(ctx, ctx.input(0), ops::kHardmax)});
}

void log_softmax(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    ctx.set_outputs({activation(ctx, softmax_of(ctx, ctx.input(0)), "log", 0, -1, 0, "log")});
}

/// PRelu: slope broadcasts (numpy, from the right) to x; graft's PReLU takes one alpha per
/// element of x without its batch axis, so the known slope is expanded to that.
void prelu(NodeContext& ctx) {
    expect_inputs(ctx, 2, 2);
    const Value& x = ctx.input(0);
    const HostTensor* slope = ctx.known(1);
    if (!slope) {  // a slope computed when the model runs: relu(x) - slope * relu(-x)
        const Value neg = activation(ctx, activation(ctx, x, "neg", 0, -1, 0, "neg"), "relu", 0, -1, 0, "negpart");
        const Value pos = activation(ctx, x, "relu", 0, -1, 0, "pos");
        return ctx.set_outputs({binary(ctx, "Sub", pos, binary(ctx, "Mul", ctx.input(1), neg, "scaled"), "")});
    }
    const Shape xs = logical_shape(x);
    if (xs.size() < 2) ctx.fail_unsupported("PRelu of a rank-" + std::to_string(xs.size()) + " input");
    // The slope as one alpha per element of x without its first (batch) dimension.
    HostTensor sl = *slope;
    if (sl.shape.size() == xs.size()) {
        if (sl.shape[0] != 1) ctx.fail_unsupported("a slope that varies along the first (batch) axis");
        sl.shape.erase(sl.shape.begin());
    }
    std::vector<Axis> axes(x.logical.axes().begin() + 1, x.logical.axes().end());
    Shape as(xs.begin() + 1, xs.end());
    for (auto d : as)
        if (d == kDynamic) ctx.fail_unsupported("PRelu over a dynamic dimension other than the batch");
    std::vector<float> alpha = host_expand(sl, as, ctx.where() + ": slope");
    ConstantVariable* al = ctx.constant(ctx.layer_name() + "/alpha", Order(axes), as, std::move(alpha));
    Attributes a;
    a.set("batch_axis", x.logical[0]);
    ctx.set_outputs({emit(ctx, ops::kPReLU, {{"x", x.var}, {"alpha", al}}, std::move(a), x.logical)});
}

/// Identity and Dropout that drops nothing (inference, or training_mode with a ratio of 0): the
/// input itself (a known input stays known: exporters write an Identity for each copy of a
/// repeated initializer), and Dropout's mask, all true, if it is used.
void identity(NodeContext& ctx) {
    expect_inputs(ctx, 1, 3);
    const bool dropout = ctx.node().op_type() == "Dropout";
    if (!dropout) expect_one_output(ctx);
    if (dropout && ctx.has_input(2)) {
        const HostTensor* t = ctx.known(2);
        if (!t) ctx.fail_needs_value(2, "training_mode computed when the model runs");
        if (t->numel() != 1) ctx.fail_format("training_mode holds " + std::to_string(t->numel()) + " values, expected one");
        if (t->ints("training_mode")[0] != 0) {  // drops at random unless the ratio is 0
            const HostTensor* r = ctx.has_input(1) ? ctx.known(1) : nullptr;
            if (ctx.has_input(1) && !r) ctx.fail_needs_value(1, "ratio computed when the model runs");
            if (!r || r->numel() != 1 || r->floats()[0] != 0.f)
                ctx.fail_unsupported("training-mode Dropout with a ratio other than 0 (random; graft runs inference)");
        }
    }
    if (const HostTensor* t = ctx.known(0)) {
        ctx.set_known_output(0, *t);
    } else {
        const Value& x = ctx.input(0);
        const Value y = emit(ctx, ops::kIdentity, {{"x", x.var}}, {}, x.logical);
        ctx.set_output(0, y.var, y.logical, ctx.is_integer(0));
    }
    if (dropout && ctx.wants_output(1)) {  // the mask: true everywhere, x's shape
        if (const HostTensor* t = ctx.known(0)) {
            HostTensor mask;
            mask.kind = HostTensor::Kind::boolean;
            mask.shape = t->shape;
            mask.i.assign(static_cast<std::size_t>(t->numel()), 1);
            return ctx.set_known_output(1, std::move(mask));
        }
        const Value m = expand_to(ctx, scalar(ctx, 1.f, "mask_one"), {SymInt{1, 0}}, ctx.dims(0));
        ctx.set_output(1, m.var, m.logical, true);
    }
}

}  // namespace

void register_activation(Registry& r) {
    add(r, "Relu", relu);
    add(r, "Sigmoid", sigmoid);
    add(r, "Tanh", tanh_);
    add(r, "Softplus", softplus);
    add(r, "Softsign", softsign);
    add(r, "Erf", erf);
    add(r, "HardSwish", hard_swish);
    add(r, "Gelu", gelu);
    add(r, "Swish", swish);
    add(r, "Abs", abs_);
    add(r, "Neg", neg);
    add(r, "Exp", exp_);
    add(r, "Log", log_);
    add(r, "Sqrt", sqrt_);
    add(r, "Reciprocal", reciprocal);
    add(r, "Floor", floor_);
    add(r, "Ceil", ceil_);
    add(r, "Round", round_);
    add(r, "Sign", sign);
    add(r, "Sin", sin_);
    add(r, "Cos", cos_);
    add(r, "Tan", tan_);
    add(r, "Asin", asin_);
    add(r, "Acos", acos_);
    add(r, "Atan", atan_);
    add(r, "Sinh", sinh_);
    add(r, "Cosh", cosh_);
    add(r, "Asinh", asinh_);
    add(r, "Acosh", acosh_);
    add(r, "Atanh", atanh_);
    add(r, "Elu", elu);
    add(r, "LeakyRelu", leaky_relu);
    add(r, "ThresholdedRelu", thresholded_relu);
    add(r, "Celu", celu);
    add(r, "Shrink", shrink);
    add(r, "Selu", selu);
    add(r, "HardSigmoid", hard_sigmoid);
    add(r, "Clip", clip);
    add(r, "Softmax", softmax);
    add(r, "LogSoftmax", log_softmax);
    add(r, "Hardmax", hardmax);
    add(r, "PRelu", prelu);
    add(r, "Identity", identity);
    add(r, "Dropout", identity);
}

}  // namespace graft::onnx
