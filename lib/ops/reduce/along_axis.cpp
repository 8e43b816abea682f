// Ops along one axis of x (reduce.hpp): TopK and CumSum, their schemas, native kernel builders and
// C++ emitters. Both backends run graft_rt/along_axis.hpp, which views x as [outer, len, inner]
// around the axis in x's memory order; the outputs keep x's order.
#include "graft_rt/along_axis.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"
#include "ops/reduce/reduce.hpp"

namespace graft::ops {

using i64 = std::int64_t;

namespace {

/// The op's axis, which x must have with a fixed size.
Axis along_axis(const Operator& op) {
    const Axis axis = op.attrs().get_axis("axis", op.describe());
    const Variable& x = in(op, "x");
    if (!x.order().has(axis)) shape_fail(op, "input " + x.describe() + " has no axis " + axis.name());
    if (x.size(axis) == kDynamic) shape_fail(op, "working along " + axis.name() + ", whose size is the dynamic batch");
    return axis;
}

// ---- TopK --------------------------------------------------------------------------------------

struct TopKAttrs {
    Axis axis;
    i64 k;
    bool largest;
    Split3 split;  ///< x as [outer, len, inner] around axis
};

TopKAttrs topk_attrs(const Operator& op) {
    const Axis axis = along_axis(op);
    const Variable& x = in(op, "x");
    const i64 len = x.size(axis);
    const i64 k = op.attr<std::int64_t>("k");
    if (k < 1 || k > len)
        shape_fail(op, "k " + std::to_string(k) + " is out of range for " + std::to_string(len) + " entries along " + axis.name() +
                           " (expected 1 to " + std::to_string(len) + ")");
    if (const Variable* kv = op.input_or_null("k"); kv && kv->numel() != 1)
        shape_fail(op, "input k " + kv->describe() + " should hold one value");
    return {axis, k, op.attr_or<bool>("largest", true), split_at(x, axis)};
}

Outputs infer_topk(const Operator& op) {
    const TopKAttrs a = topk_attrs(op);
    const Variable& x = in(op, "x");
    Shape s = x.shape();
    s[x.order().index(a.axis)] = a.k;
    return {{"values", {x.order(), s, x.dtype()}}, {"indices", {x.order(), s}}};
}

std::unique_ptr<native::Kernel> build_topk(native::BuildContext& b) {
    const TopKAttrs a = topk_attrs(b.op());
    const auto x = b.in("x"), values = b.out("values"), indices = b.out("indices");
    const auto k_fed = optional_in(b, "k");
    const auto work = b.workspace(static_cast<std::size_t>(2 * a.split.len));  // len i64
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::topk(c.at(x), c.at(values), c.at(indices), a.split.outer, a.split.len, a.split.inner, a.k, a.largest,
                       at_or_null(c, k_fed), reinterpret_cast<i64*>(c.at(work)));
    });
}

void emit_topk(cpp::EmitContext& ctx) {
    const TopKAttrs a = topk_attrs(ctx.op());
    cpp::use(ctx, "along_axis");
    cpp::emit_split(ctx, a.split, a.axis);
    const std::string work = ctx.scratch(static_cast<std::size_t>(2 * a.split.len));
    ctx.line("graft_rt::topk({}, {}, {}, outer, len, inner, /*k=*/{}, /*largest=*/{}, {}, reinterpret_cast<std::int64_t*>({}));",
             ctx.input("x"), ctx.output("values"), ctx.output("indices"), a.k, a.largest, cpp::input_or_null(ctx, "k"), work);
}

// ---- CumSum ------------------------------------------------------------------------------------

struct CumSumAttrs {
    Axis axis;
    bool exclusive, reverse;
};

CumSumAttrs cumsum_attrs(const Operator& op) {
    return {along_axis(op), op.attr_or<bool>("exclusive", false), op.attr_or<bool>("reverse", false)};
}

Outputs infer_cumsum(const Operator& op) {
    cumsum_attrs(op);
    const Variable& x = in(op, "x");
    return {{"y", {x.order(), x.shape(), x.dtype()}}};
}

std::unique_ptr<native::Kernel> build_cumsum(native::BuildContext& b) {
    const CumSumAttrs a = cumsum_attrs(b.op());
    const Split3 s = split_at(in(b.op(), "x"), a.axis);
    const auto x = b.in("x"), y = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { graft_rt::cumsum(c.at(x), c.at(y), s.outer, s.len, s.inner, a.exclusive, a.reverse); });
}

void emit_cumsum(cpp::EmitContext& ctx) {
    const CumSumAttrs a = cumsum_attrs(ctx.op());
    cpp::use(ctx, "along_axis");
    cpp::emit_split(ctx, split_at(in(ctx.op(), "x"), a.axis), a.axis);
    ctx.line("graft_rt::cumsum({}, {}, outer, len, inner, /*exclusive=*/{}, /*reverse=*/{});", ctx.input("x"), ctx.output("y"),
             a.exclusive, a.reverse);
}

}  // namespace

void register_along_axis(Registry& r) {
    OpDef(kTopK, {"x", "k?"}, infer_topk,
          "values, indices = the k largest (largest, default true) or smallest entries of x along axis `axis`, sorted, equal "
          "values by the lower index, and their indices as float32; optional input k: the k fed when the model runs, checked "
          "against attribute k (NaN values when they differ)")
        .integer_inputs({"x", "k"})
        .add(r, build_topk, emit_topk);
    OpDef(kCumSum, {"x"}, infer_cumsum,
          "y = the running sum of x along axis `axis` (exclusive: without the entry itself; reverse: from the end)")
        .inplace()
        .integer_inputs({"x"})
        .add(r, build_cumsum, emit_cumsum);
}

}  // namespace graft::ops
