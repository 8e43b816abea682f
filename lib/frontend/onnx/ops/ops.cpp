// Helpers the ONNX converter families share, and the one list of families.
#include "frontend/onnx/ops/ops.hpp"

#include <algorithm>

#include "graft/frontend/onnx.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

void add(Registry& r, const char* op_type, Handler h) {
    r.add_converter(kFrontend, op_type, [h](LayerContext& ctx) { h(static_cast<NodeContext&>(ctx)); });
}

std::size_t axis_index(const NodeContext& ctx, std::int64_t axis, std::size_t rank) {
    const auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r)
        ctx.fail_format("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) + " (expected " +
                        std::to_string(-r) + " to " + std::to_string(r - 1) + ")");
    return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

Axis axis_of(const NodeContext& ctx, const Value& v, std::int64_t axis) { return v.logical[axis_index(ctx, axis, v.logical.ndim())]; }

Value emit(NodeContext& ctx, const std::string& type, NamedVars inputs, Attributes attrs, const Order& logical, const std::string& suffix) {
    return Value{ctx.op(type, std::move(inputs), std::move(attrs), suffix)->output("y"), logical};
}

Variable* laid_out(NodeContext& ctx, const Value& v, const Order& names, const Order& order, const std::string& suffix) {
    const Value r = ctx.relabel(v, names);
    if (r.var->order() == order) return r.var;
    Attributes a;
    a.set("order", order);
    return ctx.op(ops::kTranspose, {{"x", r.var}}, std::move(a), suffix)->output("y");
}

Shape logical_shape(const Value& x) { return x.var->shape_in(x.logical); }

Value reshape(NodeContext& ctx, const Value& x, const Shape& shape, const std::string& suffix) {
    const Order out = positional_order(shape.size());
    if (x.logical == out && logical_shape(x) == shape) return x;
    Attributes a;
    a.set("in_order", x.logical);
    a.set("out_order", out);
    a.set("shape", shape);
    return emit(ctx, ops::kReshape, {{"x", x.var}}, std::move(a), out, suffix.empty() ? "reshape" : suffix);
}

Value pad_or_crop(NodeContext& ctx, const Value& x, const std::vector<std::int64_t>& begin, const std::vector<std::int64_t>& end,
                  const std::string& suffix, const std::string& mode, float value) {
    std::vector<Axis> axes;
    std::vector<std::int64_t> b, e;
    for (std::size_t i = 0; i < begin.size(); ++i)
        if (begin[i] != 0 || end[i] != 0) axes.push_back(x.logical[i]), b.push_back(begin[i]), e.push_back(end[i]);
    if (axes.empty()) return x;
    // graft's Pad leaves the batch axis N alone, but an ONNX value's first dimension is named N
    // whatever it holds (the layers of an RNN's initial state, ...): cropped, it goes by another
    // name, given back after.
    const bool first = std::find(axes.begin(), axes.end(), Axis::N) != axes.end();
    const Axis renamed("A0");
    std::vector<Axis> names = x.logical.axes();
    for (auto* list : {&names, &axes}) std::replace(list->begin(), list->end(), Axis::N, renamed);
    const Value in = first ? ctx.relabel(x, Order(names)) : x;
    Attributes a;
    a.set("axes", Order(axes));
    a.set("begin", b);
    a.set("end", e);
    if (mode != "constant") a.set("mode", mode);
    if (value != 0.f) a.set("value", value);
    const Value y = emit(ctx, ops::kPad, {{"x", in.var}}, std::move(a), in.logical, suffix.empty() ? "pad" : suffix);
    return first ? ctx.relabel(y, x.logical) : y;
}

Value crop(NodeContext& ctx, const Value& x, std::size_t axis, std::int64_t start, std::int64_t end, const std::string& suffix) {
    const Shape s = logical_shape(x);
    std::vector<std::int64_t> b(s.size(), 0), e(s.size(), 0);
    b[axis] = -start, e[axis] = -(s[axis] - end);
    return pad_or_crop(ctx, x, b, e, suffix);
}

void expect_inputs(const NodeContext& ctx, std::size_t n_lo, std::size_t n_hi) {
    if (ctx.num_inputs() < n_lo || ctx.num_inputs() > n_hi || !ctx.has_input(0))
        ctx.fail_format("has " + std::to_string(ctx.num_inputs()) + " inputs, expected " +
                        (n_lo == n_hi ? std::to_string(n_lo) : std::to_string(n_lo) + " to " + std::to_string(n_hi)));
}

void expect_one_output(const NodeContext& ctx) {
    for (std::size_t k = 1; k < ctx.num_outputs(); ++k)
        if (ctx.wants_output(k))
            ctx.fail_unsupported("output " + std::to_string(k) + " ('" + ctx.node().output(static_cast<int>(k)) +
                                 "') is not supported (training-mode outputs); only the first output can be used");
}

void register_converters(Registry& r) {
    register_activation(r);
    register_elementwise(r);
    register_linear(r);
    register_conv(r);
    register_pool(r);
    register_shape(r);
    register_constants(r);
    register_normalization(r);
    register_reduce(r);
    register_recurrent(r);
    register_resize(r);
    register_axis_ops(r);
    register_einsum(r);
    register_fused(r);
}

}  // namespace graft::onnx
