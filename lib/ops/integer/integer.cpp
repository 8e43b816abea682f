// The integer family (integer.hpp): schemas, native kernel builders and C++ emitters of Cast,
// Gather, Where and OneHot. Both backends run graft_rt/integer.hpp.
#include "ops/integer/integer.hpp"

#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

CastAttrs CastAttrs::parse(const Operator& op) {
    using graft_rt::CastTo;
    const auto name = op.attr<std::string>("to");
    for (CastTo t : {CastTo::float32, CastTo::int32, CastTo::int64, CastTo::uint8, CastTo::uint16, CastTo::int8, CastTo::boolean})
        if (name == graft_rt::cast_name(t)) return {t, dtype_from_name(name)};
    throw UnsupportedError(op.describe() + ": a Cast to '" + name + "' (expected float32, int32, int64, uint8, uint16, int8 or bool)");
}

GatherAttrs GatherAttrs::parse(const Operator& op) { return {op.attrs().get_axis("axis", op.describe())}; }

GatherAttrs::Geometry GatherAttrs::geometry(const Operator& op) const {
    const Variable& x = in(op, "x");
    const auto s = split_at(x, axis);
    return {s.outer, s.len, s.inner, in(op, "indices").numel()};
}

OneHotAttrs OneHotAttrs::parse(const Operator& op) {
    OneHotAttrs a{op.attrs().get_axis("axis", op.describe()), op.attr<std::int64_t>("depth")};
    checked::in_range(op.describe(), "depth", a.depth);
    const Variable& idx = in(op, "indices");
    if (idx.order().has(a.axis)) shape_fail(op, "indices " + idx.describe() + " already have the new axis " + a.axis.name());
    checked::product(op.describe(), "output elements", {idx.numel(), a.depth});
    if (in(op, "values").numel() != 2) shape_fail(op, "values " + in(op, "values").describe() + " should hold 2 values (off, on)");
    if (const Variable* d = op.input_or_null("depth"); d && d->numel() != 1)
        shape_fail(op, "input depth " + d->describe() + " should hold one value");
    return a;
}

namespace {

Outputs infer_one_hot(const Operator& op) {
    const auto a = OneHotAttrs::parse(op);
    const Variable& idx = in(op, "indices");
    std::vector<Axis> axes = idx.order().axes();
    axes.push_back(a.axis);
    Shape shape = idx.shape();
    shape.push_back(a.depth);
    return {{"y", {Order(std::move(axes)), shape, in(op, "values").dtype()}}};
}

std::unique_ptr<native::Kernel> build_one_hot(native::BuildContext& b) {
    const auto a = OneHotAttrs::parse(b.op());
    const std::int64_t n = in(b.op(), "indices").numel();
    const auto idx = b.in("indices"), values = b.in("values"), y = b.out("y");
    const auto depth_fed = optional_in(b, "depth");
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::one_hot(c.at(idx), c.at(values), c.at(y), n, a.depth, at_or_null(c, depth_fed));
    });
}

void emit_one_hot(cpp::EmitContext& ctx) {
    const auto a = OneHotAttrs::parse(ctx.op());
    cpp::use(ctx, "integer");
    ctx.constant_i64("n", in(ctx.op(), "indices").numel(), "indices");
    ctx.constant_i64("len", a.depth, "depth: entries along the new axis " + a.axis.name());
    ctx.line("graft_rt::one_hot({}, {}, {}, n, len, {});", ctx.input("indices"), ctx.input("values"), ctx.output("y"),
             cpp::input_or_null(ctx, "depth"));
}

Outputs infer_cast(const Operator& op) {
    const Variable& x = in(op, "x");
    return {{"y", {x.order(), x.shape(), CastAttrs::parse(op).dtype}}};
}

Outputs infer_gather(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& idx = in(op, "indices");
    const Axis axis = GatherAttrs::parse(op).axis;
    if (!x.order().has(axis)) shape_fail(op, "input " + x.describe() + " has no axis " + axis.name());
    if (x.size(axis) == kDynamic) shape_fail(op, "gathering along " + axis.name() + ", whose size is the dynamic batch");
    std::vector<Axis> axes;
    Shape shape;
    for (std::size_t i = 0; i < x.ndim(); ++i) {
        if (x.order()[i] != axis) {
            axes.push_back(x.order()[i]), shape.push_back(x.shape()[i]);
            continue;
        }
        for (std::size_t j = 0; j < idx.ndim(); ++j) {
            if (x.order().has(idx.order()[j]))
                shape_fail(op, "indices " + idx.describe() + " and input " + x.describe() + " share axis " + idx.order()[j].name());
            axes.push_back(idx.order()[j]), shape.push_back(idx.shape()[j]);
        }
    }
    return {{"y", {Order(std::move(axes)), shape, x.dtype()}}};
}

Outputs infer_where(const Operator& op) {
    const Variable& a = in(op, "a");
    for (const char* p : {"c", "b"}) {
        const Variable& v = in(op, p);
        if (!v.order().same_axes(a.order()) || v.shape_in(a.order()) != a.shape())
            shape_fail(op, std::string("input '") + p + "' " + v.describe() + " does not match input 'a' " + a.describe() +
                               " (Where takes inputs of one shape: broadcast them first)");
    }
    if (in(op, "b").dtype() != a.dtype())
        shape_fail(op, std::string("inputs 'a' and 'b' hold ") + name_of(a.dtype()) + " and " + name_of(in(op, "b").dtype()) + " values");
    return {{"y", {a.order(), a.shape(), a.dtype()}}};
}

std::optional<Order> order_of_a(const Operator& op, const std::string&) { return in(op, "a").order(); }

std::unique_ptr<native::Kernel> build_cast(native::BuildContext& b) {
    const auto to = CastAttrs::parse(b.op()).to;
    const std::int64_t n = b.op().input("x")->numel();
    const auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) { graft_rt::cast(to, c.at(x), c.at(y), n); });
}

std::unique_ptr<native::Kernel> build_gather(native::BuildContext& b) {
    const auto g = GatherAttrs::parse(b.op()).geometry(b.op());
    const auto x = b.in("x"), idx = b.in("indices"), y = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { graft_rt::gather(c.at(x), c.at(idx), c.at(y), g.outer, g.len, g.inner, g.m); });
}

std::unique_ptr<native::Kernel> build_where(native::BuildContext& b) {
    const std::int64_t n = b.op().output("y")->numel();
    const auto cond = b.in("c"), a = b.in("a"), bb = b.in("b"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) { graft_rt::where(c.at(cond), c.at(a), c.at(bb), c.at(y), n); });
}

void emit_cast(cpp::EmitContext& ctx) {
    const auto to = CastAttrs::parse(ctx.op()).to;
    cpp::use(ctx, "integer");
    ctx.constant_i64("n", ctx.op().input("x")->numel(), "elements");
    ctx.line("graft_rt::cast(graft_rt::CastTo::{}, {}, {}, n);", to == graft_rt::CastTo::boolean ? "boolean" : graft_rt::cast_name(to),
             ctx.input("x"), ctx.output("y"));
}

void emit_gather(cpp::EmitContext& ctx) {
    const auto g = GatherAttrs::parse(ctx.op()).geometry(ctx.op());
    cpp::use(ctx, "integer");
    ctx.constant_i64("outer", g.outer);
    ctx.constant_i64("len", g.len, "entries along the gathered axis");
    ctx.constant_i64("inner", g.inner);
    ctx.constant_i64("M", g.m, "indices");
    ctx.line("graft_rt::gather({}, {}, {}, outer, len, inner, M);", ctx.input("x"), ctx.input("indices"), ctx.output("y"));
}

void emit_where(cpp::EmitContext& ctx) {
    cpp::use(ctx, "integer");
    ctx.constant_i64("n", ctx.op().output("y")->numel(), "elements");
    ctx.line("graft_rt::where({}, {}, {}, {}, n);", ctx.input("c"), ctx.input("a"), ctx.input("b"), ctx.output("y"));
}

}  // namespace

void register_integer(Registry& r) {
    OpDef(kCast, {"x"}, infer_cast, "y = x converted to dtype `to` (truncated toward zero and wrapped for integers, x != 0 for bool)")
        .inplace()
        .integer_inputs({"x"})
        .add(r, build_cast, emit_cast);
    OpDef(kGather, {"x", "indices"}, infer_gather,
          "y = x with axis `axis` replaced by indices' axes, y[.., j.., ..] = x[.., indices[j..], ..] (negative: from the end; out of "
          "range: zeros)")
        .integer_inputs({"x", "indices"})
        .add(r, build_gather, emit_gather);
    OpDef(kWhere, {"c", "a", "b"}, infer_where, "y = c != 0 ? a : b, inputs of one shape")
        .required_order(order_of_a)
        .integer_inputs({"c", "a", "b"})
        .add(r, build_where, emit_where);
    OpDef(kOneHot, {"indices", "values", "depth?"}, infer_one_hot,
          "y = indices with a new last axis `axis` of size `depth`: values[1] where its index is indices' value (negative: from "
          "the end), values[0] elsewhere (out of range: everywhere); optional input depth: the depth fed when the model runs, "
          "checked against attribute depth (NaN when they differ)")
        .integer_inputs({"indices", "values", "depth"})
        .add(r, build_one_hot, emit_one_hot);
}

}  // namespace graft::ops
