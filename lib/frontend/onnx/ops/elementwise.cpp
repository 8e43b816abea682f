// ONNX's broadcasting binary ops (Add, Sub, Mul, Div, Pow, Max, Min, Mod; the comparisons Equal,
// Less, Greater, LessOrEqual, GreaterOrEqual and the logic And, Or, Xor, Not on runtime values, which
// give 1 / 0 as bool values) and the variadic Sum, Mean, Max, Min. Known operands are computed now (shape arithmetic). Operands of one shape and
// layout become graft's Merge (which the optimizer fuses); anything else the broadcasting Binary
// op, after each operand is aligned to the result's dimensions from the right (numpy's rule).
#include <algorithm>

#include "frontend/onnx/host_eval.hpp"
#include "frontend/onnx/ops/ops.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

/// The Merge op of an ONNX binary op, "" if Merge has none.
const char* merge_op(const std::string& onnx) {
    if (onnx == "Add" || onnx == "Sum") return "add";
    if (onnx == "Sub") return "sub";
    if (onnx == "Mul") return "mul";
    if (onnx == "Max") return "max";
    if (onnx == "Min") return "min";
    return "";
}

/// The Binary op's name for an ONNX binary op.
std::string binary_op(const std::string& onnx) {
    if (onnx == "LessOrEqual") return "less_equal";
    if (onnx == "GreaterOrEqual") return "greater_equal";
    std::string s = onnx == "Sum" ? "add" : onnx;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

/// `v` with `rank` logical dimensions named as `like`'s last ones: leading dimensions of size 1
/// are added (numpy's right alignment) and the names follow `like`.
Value align(NodeContext& ctx, const Value& v, const Order& like) {
    const std::size_t r = v.logical.ndim(), R = like.ndim();
    if (r == R) return ctx.relabel(v, like);
    Shape s = logical_shape(v);
    s.insert(s.begin(), R - r, 1);
    return ctx.relabel(reshape(ctx, v, s, "align"), like);
}

}  // namespace

Value binary(NodeContext& ctx, const std::string& onnx, Value a, Value b, const std::string& suffix) {
    const Order out = a.logical.ndim() >= b.logical.ndim() ? a.logical : b.logical;
    a = align(ctx, a, out);
    b = align(ctx, b, out);
    const std::string m = merge_op(onnx);
    if (!m.empty() && logical_shape(a) == logical_shape(b)) {
        Attributes at;
        at.set("op", m);
        return emit(ctx, ops::kMerge, {{"x0", a.var}, {"x1", b.var}}, std::move(at), out, suffix);
    }
    Attributes at;
    at.set("op", binary_op(onnx));
    at.set("order", out);
    if (onnx == "Mod") at.set("fmod", ctx.config().get_int("fmod", 0) != 0);
    return emit(ctx, ops::kBinary, {{"a", a.var}, {"b", b.var}}, std::move(at), out, suffix);
}

Value scalar(NodeContext& ctx, float v, const std::string& name) {
    return Value{ctx.constant(ctx.layer_name() + "/" + name, OrderC, {1}, {v}), OrderC};
}

namespace {

void binary_node(NodeContext& ctx) {
    const std::string& op = ctx.node().op_type();
    expect_inputs(ctx, 2, 2);
    if (!ctx.has_input(1)) ctx.fail_format("input 1 is missing");
    if (ctx.opset() < 7 && ctx.config().has("broadcast")) ctx.fail_unsupported("legacy broadcast attribute (opset < 7)");
    const HostTensor *ka = ctx.known(0), *kb = ctx.known(1);
    if (ka && kb) return ctx.set_known_output(0, host_binary(op, *ka, *kb, ctx.where()));
    const bool integer = ctx.is_integer(0) && ctx.is_integer(1);
    Value y = binary(ctx, op, ctx.input(0), ctx.input(1), "");
    if (integer && op == "Div") {  // integer division truncates: graft's Cast to int64 and back to float32 values
        Attributes to_int, to_float;
        to_int.set("to", std::string("int64"));
        to_float.set("to", std::string("float32"));
        y = emit(ctx, ops::kCast, {{"x", y.var}}, std::move(to_int), y.logical, "trunc");
        y = emit(ctx, ops::kCast, {{"x", y.var}}, std::move(to_float), y.logical, "values");
    }
    ctx.set_output(0, y.var, y.logical, integer);
}

/// Sum, Mean, Max, Min of one or more inputs.
void variadic(NodeContext& ctx) {
    const std::string& op = ctx.node().op_type();
    if (ctx.num_inputs() < 1) ctx.fail_format("has no inputs");
    for (std::size_t i = 0; i < ctx.num_inputs(); ++i)
        if (!ctx.has_input(i)) ctx.fail_format("input " + std::to_string(i) + " is missing");
    Value acc = ctx.input(0);
    const std::string step = op == "Mean" ? "Sum" : op;
    for (std::size_t i = 1; i < ctx.num_inputs(); ++i) acc = binary(ctx, step, acc, ctx.input(i), "in" + std::to_string(i));
    if (op == "Mean" && ctx.num_inputs() > 1) {
        const auto n = static_cast<float>(ctx.num_inputs());
        acc = binary(ctx, "Mul", acc, scalar(ctx, 1.f / n, "count"), "mean");
    } else if (ctx.num_inputs() == 1) {
        acc = emit(ctx, ops::kIdentity, {{"x", acc.var}}, {}, acc.logical);
    }
    ctx.set_outputs({acc});
}

}  // namespace

void register_elementwise(Registry& r) {
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Mod"}) add(r, op, binary_node);
    for (const char* op : {"Sum", "Mean", "Max", "Min"}) add(r, op, variadic);
}

}  // namespace graft::onnx
