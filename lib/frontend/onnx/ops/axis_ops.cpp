// TopK, CumSum and OneHot: ops along one axis, as graft's TopK, CumSum and OneHot ops. TopK's k,
// CumSum's axis and OneHot's depth are known when converting (constants, shape arithmetic); TopK's
// k and OneHot's depth may also be model inputs when the model declares the output's shape (ONNX's
// node tests feed them so): the declared size is used, and the kernel checks the value fed against
// it when the model runs (NaN outputs otherwise). OneHot's indices and values may be computed
// when the model runs.
#include <cmath>

#include "frontend/onnx/ops/ops.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

using i64 = std::int64_t;

/// The size of output `out` along dimension `axis` as the model declares it, for a count that is
/// a model input (input `i`, called `what`); UnsupportedError when it is computed otherwise or
/// the model declares no such size.
i64 declared_size(NodeContext& ctx, std::size_t i, std::size_t out, std::size_t rank, std::size_t axis, const std::string& what) {
    const Value& v = ctx.input(i);
    // An integer model input reaches the node through the Cast to float32 made on entry.
    const Operator* cast = v.var->producer();
    const bool model_input = ctx.graph().is_input(v.var) ||
                             (cast && cast->type() == ops::kCast && ctx.graph().is_input(cast->inputs().at(0).second));
    const auto declared = ctx.declared_shape(out);
    if (!model_input || !declared || declared->size() != rank || (*declared)[axis] == kDynamic)
        ctx.fail_needs_value(i, "input '" + ctx.node().input(static_cast<int>(i)) + "' (" + what +
                             ") is computed when the model runs; graft needs it known when converting (or a model input, "
                             "with the output's shape declared)");
    if (numel(v.var->shape()) != 1) ctx.fail_shape(what + " holds " + shape_str(v.var->shape()) + " entries, expected one");
    return (*declared)[axis];
}

void topk(NodeContext& ctx) {
    const bool k_input = ctx.opset() >= 10;
    expect_inputs(ctx, k_input ? 2 : 1, k_input ? 2 : 1);
    const Value& x = ctx.input(0);
    const std::size_t r = x.logical.ndim();
    if (r == 0) ctx.fail_shape("input of rank 0 (TopK works along an axis)");
    const std::size_t axis = axis_index(ctx, ctx.config().get_int("axis", -1), r);
    NamedVars ins{{"x", x.var}};
    i64 k = 0;
    if (!k_input) {
        k = ctx.config().get_int("k");
    } else if (!ctx.has_input(1)) {
        ctx.fail_format("input 1 (k) is missing");
    } else if (ctx.known(1)) {
        const auto ks = ctx.known_ints(1, "k");
        if (ks.size() != 1) ctx.fail_shape("k holds " + std::to_string(ks.size()) + " values, expected one");
        k = ks[0];
    } else {
        k = declared_size(ctx, 1, ctx.wants_output(0) ? 0 : 1, r, axis, "k");
        ins.emplace_back("k", ctx.input(1).var);
    }
    const i64 len = x.var->size(x.logical[axis]);
    if (len == kDynamic) ctx.fail_unsupported("TopK along the dynamic batch axis");
    if (k < 1 || k > len)
        ctx.fail_shape("k " + std::to_string(k) + " is out of range for " + std::to_string(len) + " entries along axis " +
                       std::to_string(axis) + " (expected 1 to " + std::to_string(len) + ")");
    Attributes a;
    a.set("axis", x.logical[axis]);
    a.set("k", k);
    a.set("largest", ctx.config().get_int("largest", 1) != 0);
    a.set("sorted", ctx.config().get_int("sorted", 1) != 0);  // unsorted may come in any order: graft's is sorted
    Operator* op = ctx.op(ops::kTopK, std::move(ins), std::move(a));
    if (ctx.wants_output(0)) ctx.set_output(0, op->output("values"), x.logical, ctx.is_integer(0));
    if (ctx.wants_output(1)) ctx.set_output(1, op->output("indices"), x.logical, true);
}

void cumsum(NodeContext& ctx) {
    expect_inputs(ctx, 2, 2);
    const Value& x = ctx.input(0);
    const auto axes = ctx.known_ints(1, "axis");
    if (axes.size() != 1) ctx.fail_shape("axis holds " + std::to_string(axes.size()) + " values, expected one");
    const std::size_t r = x.logical.ndim();
    if (r == 0) ctx.fail_shape("input of rank 0 (CumSum works along an axis)");
    Attributes a;
    a.set("axis", x.logical[axis_index(ctx, axes[0], r)]);
    a.set("exclusive", ctx.config().get_int("exclusive", 0) != 0);
    a.set("reverse", ctx.config().get_int("reverse", 0) != 0);
    ctx.set_output(0, emit(ctx, ops::kCumSum, {{"x", x.var}}, std::move(a), x.logical).var, x.logical, ctx.is_integer(0));
}

void one_hot(NodeContext& ctx) {
    expect_inputs(ctx, 3, 3);
    for (std::size_t i = 1; i < 3; ++i)
        if (!ctx.has_input(i)) ctx.fail_format("input " + std::to_string(i) + (i == 1 ? " (depth)" : " (values)") + " is missing");
    const Value& indices = ctx.input(0);
    const std::size_t r = indices.logical.ndim();
    const std::size_t axis = axis_index(ctx, ctx.config().get_int("axis", -1), r + 1);
    NamedVars ins{{"indices", indices.var}, {"values", ctx.input(2).var}};
    i64 depth = 0;
    if (const HostTensor* d = ctx.known(1)) {
        if (d->numel() != 1) ctx.fail_shape("depth holds " + shape_str(d->shape) + " entries, expected one");
        const double v = std::trunc(static_cast<double>(d->floats()[0]));
        if (!(v >= 1 && v <= static_cast<double>(kMaxElements)))
            ctx.fail_shape("depth " + std::to_string(d->floats()[0]) + " is out of range (expected 1 to " +
                           checked::limit_str(kMaxElements) + ")");
        depth = static_cast<i64>(v);
    } else {
        depth = declared_size(ctx, 1, 0, r + 1, axis, "depth");
        ins.emplace_back("depth", ctx.input(1).var);
    }
    if (numel(ctx.input(2).var->shape()) != 2)
        ctx.fail_shape("values holds " + shape_str(ctx.input(2).var->shape()) + " entries, expected 2 (off, on)");
    // The new axis: a name the indices do not use, last in memory; logically at `axis`.
    Axis added("O0");
    for (int n = 1; indices.logical.has(added); ++n) added = Axis("O" + std::to_string(n));
    Attributes a;
    a.set("axis", added);
    a.set("depth", depth);
    std::vector<Axis> logical = indices.logical.axes();
    logical.insert(logical.begin() + static_cast<std::ptrdiff_t>(axis), added);
    const Order out(std::move(logical));
    ctx.set_output(0, emit(ctx, ops::kOneHot, std::move(ins), std::move(a), out).var, out, ctx.is_integer(2));
}

}  // namespace

void register_axis_ops(Registry& r) {
    add(r, "TopK", topk);
    add(r, "CumSum", cumsum);
    add(r, "OneHot", one_hot);
}

}  // namespace graft::onnx
