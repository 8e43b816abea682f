// The broadcast family (broadcast.hpp): Binary's and Expand's schemas, native kernel builders and
// emitters. Both backends run graft_rt::binary (or broadcast_to), which fuses what it can and
// takes a flat loop when a and b are laid out like y, or when one of them is a single value.
#include "ops/broadcast/broadcast.hpp"

#include <algorithm>

#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/fused/fused.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

using i64 = std::int64_t;

BinaryAttrs BinaryAttrs::parse(const Operator& op) {
    using graft_rt::BinaryOp;
    const auto k = op.attr<std::string>("op");
    BinaryAttrs a;
    a.order = op.attrs().get_order("order", op.describe());
    for (BinaryOp b : {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div, BinaryOp::pow, BinaryOp::max, BinaryOp::min,
                       BinaryOp::mod, BinaryOp::equal, BinaryOp::less, BinaryOp::greater, BinaryOp::less_equal,
                       BinaryOp::greater_equal, BinaryOp::and_, BinaryOp::or_, BinaryOp::xor_})
        if (k == graft_rt::binary_name(b)) {
            a.op = b == BinaryOp::mod && op.attr_or<bool>("fmod", false) ? BinaryOp::fmod : b;
            return a;
        }
    throw UnsupportedError(op.describe() + ": binary op '" + k +
                           "' (expected add, sub, mul, div, pow, max, min, mod, equal, less, greater, less_equal, greater_equal, "
                           "and, or or xor)");
}

namespace {

/// The stride of v along `axis`; 0 where v lacks the axis or has it once.
i64 stride(const Variable& v, const Axis& axis) {
    if (!v.order().has(axis) || v.size(axis) == 1) return 0;
    i64 s = 1;
    for (std::size_t i = v.order().index(axis) + 1; i < v.ndim(); ++i) s *= v.shape()[i];
    return s;
}

/// ShapeError unless every axis of v is one of `order`'s.
void expect_subset(const Operator& op, const Variable& v, const Order& order) {
    for (const auto& axis : v.order().axes())
        if (!order.has(axis))
            shape_fail(op, "input " + v.describe() + " has axis " + axis.name() + ", which the output order " + order.str() + " lacks");
}

}  // namespace

Shape BinaryAttrs::out_shape(const Operator& op) const {
    const Variable& a = in(op, "a");
    const Variable& b = in(op, "b");
    for (const Variable* v : {&a, &b}) expect_subset(op, *v, order);
    Shape out;
    for (const auto& axis : order.axes()) {
        const i64 sa = a.order().has(axis) ? a.size(axis) : 1;
        const i64 sb = b.order().has(axis) ? b.size(axis) : 1;
        i64 s = sa;
        if (sa == sb || sb == 1) s = sa;
        else if (sa == 1) s = sb;
        else if (sa == kDynamic) s = sb;  // the batch: the other input fixes it
        else if (sb == kDynamic) s = sa;
        else
            shape_fail(op, "cannot broadcast a " + a.describe() + " with b " + b.describe() + ": axis " + axis.name() + " has " +
                               std::to_string(sa) + " and " + std::to_string(sb) + " entries");
        out.push_back(s);
    }
    return out;
}

BinaryAttrs::Geometry BinaryAttrs::geometry(const Operator& op) const {
    const Shape y = out_shape(op);
    Geometry g;
    for (std::size_t i = 0; i < order.ndim(); ++i) {
        if (y[i] == 1) continue;
        g.shape.push_back(y[i]);
        g.a_strides.push_back(stride(in(op, "a"), order[i]));
        g.b_strides.push_back(stride(in(op, "b"), order[i]));
    }
    if (g.shape.empty()) g = {{1}, {0}, {0}};
    check_rank(op, g.shape.size(), graft_rt::binary_max_rank, "an output with axes of size > 1");
    return g;
}

ExpandAttrs ExpandAttrs::parse(const Operator& op) {
    ExpandAttrs a;
    a.order = op.attrs().get_order("order", op.describe());
    a.shape = op.attr<std::vector<i64>>("shape");
    if (a.shape.size() != a.order.ndim()) shape_fail(op, "shape " + shape_str(a.shape) + " does not fit order " + a.order.str());
    for (auto d : a.shape)
        if (d < 1 && d != kDynamic) shape_fail(op, "bad shape " + shape_str(a.shape));
    if (std::count(a.shape.begin(), a.shape.end(), kDynamic)) a.like_axis = op.attrs().get_axis("like_axis", op.describe());
    return a;
}

Shape ExpandAttrs::out_shape(const Operator& op) const {
    const Variable& x = in(op, "x");
    expect_subset(op, x, order);
    const Variable* like = op.input_or_null("like");
    Shape out = shape;
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (out[i] == kDynamic) {
            if (!like) shape_fail(op, "shape " + shape_str(shape) + " has a dynamic entry but the op has no input 'like'");
            out[i] = like->size(like_axis);
        }
        if (!x.order().has(order[i])) continue;
        const i64 xs = x.size(order[i]);
        if (xs != 1 && xs != out[i] && xs != kDynamic && out[i] != kDynamic)
            shape_fail(op, "cannot broadcast x " + x.describe() + " to " + shape_str(out) + " " + order.str() + ": axis " + order[i].name());
    }
    return out;
}

ExpandAttrs::Geometry ExpandAttrs::geometry(const Operator& op) const {
    Geometry g;
    g.shape = out_shape(op);
    for (std::size_t i = 0; i < order.ndim(); ++i) g.x_strides.push_back(stride(in(op, "x"), order[i]));
    check_rank(op, g.shape.size(), graft_rt::binary_max_rank, "an output");
    return g;
}

namespace {

Outputs infer_binary(const Operator& op) {
    const auto attrs = BinaryAttrs::parse(op);
    for (const char* port : {"a", "b"})
        if (in(op, port).dtype() != DType::float32) shape_fail(op, std::string("input ") + in(op, port).describe() + " is not float32");
    return {{"y", {attrs.order, attrs.out_shape(op)}}};
}

std::unique_ptr<native::Kernel> build_binary(native::BuildContext& b) {
    const auto attrs = BinaryAttrs::parse(b.op());
    const auto g = attrs.geometry(b.op());
    const auto shape = fixed_array<graft_rt::binary_max_rank>(g.shape);
    const auto as = fixed_array<graft_rt::binary_max_rank>(g.a_strides);
    const auto bs = fixed_array<graft_rt::binary_max_rank>(g.b_strides);
    const int rank = static_cast<int>(g.shape.size());
    const auto kind = attrs.op;
    const auto x = b.in("a"), w = b.in("b"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::binary(kind, c.at(x), c.at(w), c.at(y), shape.data(), as.data(), bs.data(), rank);
    });
}

void emit_binary(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto attrs = BinaryAttrs::parse(op);
    const auto g = attrs.geometry(op);
    cpp::use(ctx, "binary");
    ctx.constant_list("shape", g.shape, "y " + attrs.order.str() + ", axes of size 1 left out");
    ctx.constant_list("a_strides", g.a_strides, "a " + op.input("a")->order().str() + ", 0: broadcast");
    ctx.constant_list("b_strides", g.b_strides, "b " + op.input("b")->order().str() + ", 0: broadcast");
    const std::string name = graft_rt::binary_name(attrs.op);
    const bool keyword = name == "and" || name == "or" || name == "xor";  // the enumerators are and_, or_, xor_
    ctx.line("graft_rt::binary(graft_rt::BinaryOp::{}, {}, {}, {}, shape, a_strides, b_strides, {});", keyword ? name + "_" : name,
             ctx.input("a"), ctx.input("b"), ctx.output("y"), g.shape.size());
}

Outputs infer_expand(const Operator& op) {
    const auto attrs = ExpandAttrs::parse(op);
    if (in(op, "x").dtype() != DType::float32) shape_fail(op, "input " + in(op, "x").describe() + " is not float32");
    return {{"y", {attrs.order, attrs.out_shape(op)}}};
}

std::unique_ptr<native::Kernel> build_expand(native::BuildContext& b) {
    const auto g = ExpandAttrs::parse(b.op()).geometry(b.op());
    const auto shape = fixed_array<graft_rt::binary_max_rank>(g.shape);
    const auto xs = fixed_array<graft_rt::binary_max_rank>(g.x_strides);
    const int rank = static_cast<int>(g.shape.size());
    const auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) { graft_rt::broadcast_to(c.at(x), c.at(y), shape.data(), xs.data(), rank); });
}

void emit_expand(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto attrs = ExpandAttrs::parse(op);
    const auto g = attrs.geometry(op);
    cpp::use(ctx, "binary");
    ctx.constant_list("shape", g.shape, "y " + attrs.order.str());
    ctx.constant_list("x_strides", g.x_strides, "x " + op.input("x")->order().str() + ", 0: broadcast");
    ctx.line("graft_rt::broadcast_to({}, {}, shape, x_strides, {});", ctx.input("x"), ctx.output("y"), g.shape.size());
}

/// The broadcast spec of a fused program reading v for y: "" when v is laid out like y, "*" for a
/// single value, "A,B" when v's axes of size > 1 are adjacent in y's order in v's memory order;
/// nullopt otherwise.
std::optional<std::string> bcast_spec(const Variable& v, const Variable& y) {
    if (v.order() == y.order() && v.shape() == y.shape()) return std::string();
    std::vector<std::size_t> at;  // positions in y of v's axes of size > 1, in v's memory order
    std::string spec;
    for (std::size_t i = 0; i < v.ndim(); ++i) {
        if (v.shape()[i] == 1) continue;
        if (v.shape()[i] == kDynamic) return std::nullopt;
        at.push_back(y.order().index(v.order()[i]));
        spec += (spec.empty() ? "" : ",") + v.order()[i].name();
    }
    for (std::size_t k = 1; k < at.size(); ++k)
        if (at[k] != at[k - 1] + 1) return std::nullopt;
    return at.empty() ? std::string("*") : spec;
}

/// add, sub, mul, max and min as one step of a fused program, when one input is laid out like y
/// (a, or b for the operations that commute) and the other is too or broadcasts along adjacent
/// axes of y in its own order; div by a constant single value as the step div.
std::optional<ElementwiseProgram> binary_program(const Operator& op) {
    using graft_rt::BinaryOp;
    const auto kind = BinaryAttrs::parse(op).op;
    Variable* a = op.input("a");
    Variable* b = op.input("b");
    const Variable& y = *op.output("y");
    const bool commutes = kind == BinaryOp::add || kind == BinaryOp::mul || kind == BinaryOp::max || kind == BinaryOp::min;
    if (!commutes && kind != BinaryOp::sub && kind != BinaryOp::div) return std::nullopt;
    auto sa = bcast_spec(*a, y), sb = bcast_spec(*b, y);
    if (!sa || !sb) return std::nullopt;
    if (!sa->empty()) {  // x0 must be laid out like y
        if (!commutes || !sb->empty()) return std::nullopt;
        std::swap(a, b);
        std::swap(sa, sb);
    }
    fused::Program p;
    if (kind == BinaryOp::div) {
        if (!b->is_constant() || b->numel() != 1) return std::nullopt;
        const float d = static_cast<const ConstantVariable&>(*b).data().at(0);
        p.bcast = {""};
        p.steps = {{"div", 0, -1, "", {static_cast<double>(d), 0.0, 0.0}}};
        return fused::lowering({{a, nullptr, ""}}, p);
    }
    p.bcast = {"", *sb};
    p.steps = {{graft_rt::binary_name(kind), 0, 1, "", {0.0, 0.0, 0.0}}};
    return fused::lowering({{a, nullptr, ""}, {b, nullptr, ""}}, p);
}

}  // namespace

void register_broadcast(Registry& r) {
    // Not inplace: y may only be written over a when a has y's shape and layout, which a schema
    // trait cannot say; no required order: the kernel reads any layout.
    OpDef(kBinary, {"a", "b"}, infer_binary,
          "y = a (op) b, op add|sub|mul|div|pow|max|min|mod (attr fmod: C fmod instead of Python's mod), numpy "
          "broadcasting over named axes; y's axes are attr order's, any memory order of a and b")
        .elementwise_program(binary_program)
        .add(r, build_binary, emit_binary);
    OpDef(kExpand, {"x", "like?"}, infer_expand,
          "y = x broadcast to attr shape (numpy's broadcast_to) in attr order; a dynamic entry of shape is input like's size "
          "along attr like_axis (like is read for its size only); any memory order of x")
        .integer_inputs({"like"})
        .add(r, build_expand, emit_expand);
}

}  // namespace graft::ops
