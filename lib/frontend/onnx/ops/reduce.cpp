// ReduceSum / Mean / Max / Min / Prod / L1 / L2 / SumSquare / LogSum / LogSumExp and ArgMax /
// ArgMin as graft's Reduce and ArgMax / ArgMin ops over the named axes of the input.
#include "frontend/onnx/ops/ops.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

const char* reduce_kind(const std::string& op) {
    if (op == "ReduceSum") return "sum";
    if (op == "ReduceMean") return "mean";
    if (op == "ReduceMax") return "max";
    if (op == "ReduceMin") return "min";
    if (op == "ReduceProd") return "prod";
    if (op == "ReduceL1") return "l1";
    if (op == "ReduceL2") return "l2";
    if (op == "ReduceSumSquare") return "sum_square";
    if (op == "ReduceLogSum") return "log_sum";
    return "log_sum_exp";
}

}  // namespace

Value reduce(NodeContext& ctx, const Value& x, const std::string& kind, const std::vector<std::int64_t>& axes, bool keepdims,
             const std::string& suffix) {
    const std::size_t r = x.logical.ndim();
    std::vector<bool> red(r, axes.empty());
    for (auto a : axes) red[axis_index(ctx, a, r)] = true;
    std::vector<Axis> names, kept;
    for (std::size_t i = 0; i < r; ++i) (red[i] ? names : kept).push_back(x.logical[i]);
    Attributes at;
    at.set("kind", kind);
    at.set("axes", Order(names));
    at.set("keepdims", keepdims);
    return emit(ctx, ops::kReduce, {{"x", x.var}}, std::move(at), keepdims ? x.logical : Order(kept), suffix);
}

namespace {

void reduce_node(NodeContext& ctx) {
    expect_inputs(ctx, 1, 2);
    const std::string& op = ctx.node().op_type();
    const bool keepdims = ctx.config().get_int("keepdims", 1) != 0;
    // The axes: an input for ReduceSum since opset 13 (and every reduction since 18), else an attribute.
    std::vector<std::int64_t> axes;
    const bool axes_input = (op == "ReduceSum" && ctx.opset() >= 13) || ctx.opset() >= 18;
    if (axes_input && ctx.has_input(1)) axes = ctx.known_ints(1, "axes");
    else if (!axes_input && ctx.config().has("axes")) axes = ctx.config().get_ints("axes");
    const Value& x = ctx.input(0);
    if (axes.empty() && ctx.config().get_int("noop_with_empty_axes", 0) != 0)
        return ctx.set_outputs({emit(ctx, ops::kIdentity, {{"x", x.var}}, {}, x.logical)});
    ctx.set_outputs({reduce(ctx, x, reduce_kind(op), axes, keepdims, "")});
}

void arg_node(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    const Value& x = ctx.input(0);
    const std::size_t r = x.logical.ndim();
    const std::size_t axis = axis_index(ctx, ctx.config().get_int("axis", 0), r);
    const bool keepdims = ctx.config().get_int("keepdims", 1) != 0;
    Attributes at;
    at.set("axis", x.logical[axis]);
    at.set("keepdims", keepdims);
    at.set("select_last_index", ctx.config().get_int("select_last_index", 0) != 0);
    std::vector<Axis> kept;
    for (std::size_t i = 0; i < r; ++i)
        if (i != axis || keepdims) kept.push_back(x.logical[i]);
    const bool max = ctx.node().op_type() == "ArgMax";
    ctx.set_output(0, emit(ctx, max ? ops::kArgMax : ops::kArgMin, {{"x", x.var}}, std::move(at), Order(kept)).var, Order(kept), true);
}

/// Det of [*, M, M]: graft's Det over the last two logical axes.
void det(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    const Value& x = ctx.input(0);
    const std::size_t r = x.logical.ndim();
    if (r < 2) ctx.fail_shape("input of rank " + std::to_string(r) + " (expected [*, M, M])");
    Attributes a;
    a.set("axes", std::vector<std::string>{x.logical[r - 2].name(), x.logical[r - 1].name()});
    const Order kept(std::vector<Axis>(x.logical.axes().begin(), x.logical.axes().end() - 2));
    ctx.set_outputs({emit(ctx, ops::kDet, {{"x", x.var}}, std::move(a), kept)});
}

}  // namespace

void register_reduce(Registry& r) {
    add(r, "Det", det);
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
        add(r, op, reduce_node);
    add(r, "ArgMax", arg_node);
    add(r, "ArgMin", arg_node);
}

}  // namespace graft::onnx
