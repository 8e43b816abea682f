// The reduce family (reduce.hpp): schemas, native kernel builders and emitters of Reduce, ArgMax,
// ArgMin and Hardmax. Both backends run graft_rt's kernels (graft_rt/reduce.hpp), which read x in
// any memory order through its strides; y keeps x's order, without the reduced axes (Hardmax:
// with them).
#include "ops/reduce/reduce.hpp"

#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

using i64 = std::int64_t;

ReduceAttrs ReduceAttrs::parse(const Operator& op) {
    using graft_rt::ReduceKind;
    ReduceAttrs a;
    const auto k = op.attr<std::string>("kind");
    bool found = false;
    for (ReduceKind r : {ReduceKind::sum, ReduceKind::mean, ReduceKind::max, ReduceKind::min, ReduceKind::prod, ReduceKind::l1,
                         ReduceKind::l2, ReduceKind::sum_square, ReduceKind::log_sum, ReduceKind::log_sum_exp})
        if (k == graft_rt::reduce_name(r)) a.kind = r, found = true;
    if (!found)
        throw UnsupportedError(op.describe() + ": reduction '" + k +
                               "' (expected sum, mean, max, min, prod, l1, l2, sum_square, log_sum or log_sum_exp)");
    a.axes = axes_attr(op, "axes");
    a.keepdims = op.attr_or<bool>("keepdims", false);
    const Variable& x = in(op, "x");
    for (std::size_t i = 0; i < a.axes.size(); ++i) {
        if (!x.order().has(a.axes[i])) shape_fail(op, "input " + x.describe() + " has no axis " + a.axes[i].name() + " to reduce");
        for (std::size_t j = 0; j < i; ++j)
            if (a.axes[j] == a.axes[i]) shape_fail(op, "axis " + a.axes[i].name() + " is listed twice in axes");
    }
    return a;
}

ReduceAttrs::Geometry ReduceAttrs::geometry(const Operator& op) const {
    const Variable& x = in(op, "x");
    Geometry g;
    i64 stride = 1;
    for (std::size_t i = x.ndim(); i-- > 0;) {  // innermost first, then reversed
        const i64 d = x.shape()[i];
        if (d != 1) {
            const bool reduced = std::find(axes.begin(), axes.end(), x.order()[i]) != axes.end();
            (reduced ? g.reduced : g.kept).push_back(d);
            (reduced ? g.reduced_strides : g.kept_strides).push_back(stride);
        }
        stride *= d;
    }
    for (auto* v : {&g.kept, &g.kept_strides, &g.reduced, &g.reduced_strides}) std::reverse(v->begin(), v->end());
    if (g.kept.empty()) g.kept = {1}, g.kept_strides = {0};
    if (g.reduced.empty()) g.reduced = {1}, g.reduced_strides = {0};
    check_rank(op, g.kept.size(), graft_rt::reduce_max_rank, "kept axes");
    check_rank(op, g.reduced.size(), graft_rt::reduce_max_rank, "reduced axes");
    return g;
}

ArgReduceAttrs ArgReduceAttrs::parse(const Operator& op) {
    ArgReduceAttrs a{op.attrs().get_axis("axis", op.describe()), op.attr_or<bool>("keepdims", false),
                     op.attr_or<bool>("select_last_index", false)};
    if (!in(op, "x").order().has(a.axis)) shape_fail(op, "input " + in(op, "x").describe() + " has no axis " + a.axis.name());
    return a;
}

namespace {

/// x's order and shape without the axes `axes` (keepdims: with them, of size 1).
Outputs without(const Operator& op, const std::vector<Axis>& axes, bool keepdims) {
    const Variable& x = in(op, "x");
    if (x.dtype() != DType::float32) shape_fail(op, "input " + x.describe() + " is not float32");
    std::vector<Axis> order;
    Shape shape;
    for (std::size_t i = 0; i < x.ndim(); ++i) {
        const bool reduced = std::find(axes.begin(), axes.end(), x.order()[i]) != axes.end();
        if (reduced && !keepdims) continue;
        order.push_back(x.order()[i]);
        shape.push_back(reduced ? 1 : x.shape()[i]);
    }
    return {{"y", {Order(std::move(order)), std::move(shape)}}};
}

// ---- Reduce ------------------------------------------------------------------------------------

Outputs infer_reduce(const Operator& op) {
    const auto a = ReduceAttrs::parse(op);
    return without(op, a.axes, a.keepdims);
}

std::unique_ptr<native::Kernel> build_reduce(native::BuildContext& b) {
    const auto a = ReduceAttrs::parse(b.op());
    const auto g = a.geometry(b.op());
    constexpr int R = graft_rt::reduce_max_rank;
    const auto kd = fixed_array<R>(g.kept), ks = fixed_array<R>(g.kept_strides);
    const auto rd = fixed_array<R>(g.reduced), rs = fixed_array<R>(g.reduced_strides);
    const int nk = static_cast<int>(g.kept.size()), nr = static_cast<int>(g.reduced.size());
    const auto kind = a.kind;
    const auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::reduce(kind, c.at(x), c.at(y), kd.data(), ks.data(), nk, rd.data(), rs.data(), nr);
    });
}

void emit_reduce(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto a = ReduceAttrs::parse(op);
    const auto g = a.geometry(op);
    std::string names;
    for (const auto& axis : a.axes) names += (names.empty() ? "" : ", ") + axis.name();
    cpp::use(ctx, "reduce");
    ctx.comment("x " + op.input("x")->order().str() + ", reduced over " + (names.empty() ? "no axis" : names) +
                "; axes of size 1 left out");
    ctx.constant_list("kept", g.kept, "y's entries");
    ctx.constant_list("kept_strides", g.kept_strides, "in x");
    ctx.constant_list("reduced", g.reduced);
    ctx.constant_list("reduced_strides", g.reduced_strides, "in x");
    ctx.line("graft_rt::reduce(graft_rt::ReduceKind::{}, {}, {}, kept, kept_strides, {}, reduced, reduced_strides, {});",
             graft_rt::reduce_name(a.kind), ctx.input("x"), ctx.output("y"), g.kept.size(), g.reduced.size());
}

// ---- ArgMax, ArgMin ----------------------------------------------------------------------------

Outputs infer_arg(const Operator& op) {
    const auto a = ArgReduceAttrs::parse(op);
    return without(op, {a.axis}, a.keepdims);
}

std::unique_ptr<native::Kernel> build_arg(native::BuildContext& b) {
    const auto a = ArgReduceAttrs::parse(b.op());
    const Split3 s = split_at(in(b.op(), "x"), a.axis);
    const bool max = b.op().type() == kArgMax, last = a.select_last_index;
    const auto x = b.in("x"), y = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { graft_rt::arg_reduce(c.at(x), c.at(y), s.outer, s.len, s.inner, max, last); });
}

void emit_arg(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto a = ArgReduceAttrs::parse(op);
    cpp::use(ctx, "reduce");
    cpp::emit_split(ctx, split_at(in(op, "x"), a.axis), a.axis);
    ctx.line("graft_rt::arg_reduce({}, {}, outer, len, inner, /*max=*/{}, /*last=*/{});", ctx.input("x"), ctx.output("y"),
             op.type() == kArgMax, a.select_last_index);
}

// ---- Hardmax -----------------------------------------------------------------------------------

Axis hardmax_axis(const Operator& op) {
    const Axis axis = op.attrs().get_axis("axis", op.describe());
    if (!in(op, "x").order().has(axis)) shape_fail(op, "input " + in(op, "x").describe() + " has no axis " + axis.name());
    return axis;
}

Outputs infer_hardmax(const Operator& op) {
    hardmax_axis(op);
    return like_x(op);
}

std::unique_ptr<native::Kernel> build_hardmax(native::BuildContext& b) {
    const Split3 s = split_at(in(b.op(), "x"), hardmax_axis(b.op()));
    const auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) { graft_rt::hardmax(c.at(x), c.at(y), s.outer, s.len, s.inner); });
}

void emit_hardmax(cpp::EmitContext& ctx) {
    const Axis axis = hardmax_axis(ctx.op());
    cpp::use(ctx, "reduce");
    cpp::emit_split(ctx, split_at(in(ctx.op(), "x"), axis), axis);
    ctx.line("graft_rt::hardmax({}, {}, outer, len, inner);", ctx.input("x"), ctx.output("y"));
}

// ---- Det ---------------------------------------------------------------------------------------

/// The two axes of each matrix (rows, then columns), checked square; `batch` of them.
struct DetDims {
    Axis rows, cols;
    std::int64_t batch, m;
};

DetDims det_dims(const Operator& op) {
    const auto axes = axes_attr(op, "axes");
    const Variable& x = in(op, "x");
    if (axes.size() != 2 || axes[0] == axes[1]) shape_fail(op, "axes should name two axes (rows, columns)");
    for (const auto& a : axes)
        if (!x.order().has(a)) shape_fail(op, "input " + x.describe() + " has no axis " + a.name());
    const std::int64_t m = x.size(axes[0]);
    if (x.size(axes[1]) != m) shape_fail(op, "input " + x.describe() + " is not square along " + axes[0].name() + ", " + axes[1].name());
    return {axes[0], axes[1], x.numel() / std::max<std::int64_t>(m * m, 1), m};
}

Outputs infer_det(const Operator& op) {
    const DetDims d = det_dims(op);
    return without(op, {d.rows, d.cols}, false);
}

std::unique_ptr<native::Kernel> build_det(native::BuildContext& b) {
    const DetDims d = det_dims(b.op());
    const auto x = b.in("x"), y = b.out("y");
    const auto work = b.workspace(static_cast<std::size_t>(2 * std::max<std::int64_t>(d.m * d.m, 1)));  // doubles
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::det(c.at(x), c.at(y), d.batch, d.m, reinterpret_cast<double*>(c.at(work)));
    });
}

void emit_det(cpp::EmitContext& ctx) {
    const DetDims d = det_dims(ctx.op());
    cpp::use(ctx, "reduce");
    const std::string work = ctx.scratch(static_cast<std::size_t>(2 * std::max<std::int64_t>(d.m * d.m, 1)));
    ctx.line("graft_rt::det({}, {}, {}, {}, reinterpret_cast<double*>({}));", ctx.input("x"), ctx.output("y"), d.batch, d.m, work);
}

}  // namespace

void register_reduce(Registry& r) {
    OpDef(kReduce, {"x"}, infer_reduce,
          "y = the reduction kind (sum|mean|max|min|prod|l1|l2|sum_square|log_sum|log_sum_exp) of x over the axes "
          "`axes`; keepdims keeps them with size 1; any memory order of x")
        .add(r, build_reduce, emit_reduce);
    for (const char* type : {kArgMax, kArgMin}) {
        const std::string which = std::string(type) == kArgMax ? "largest" : "smallest";
        OpDef(type, {"x"}, infer_arg,
              "y = the index along axis `axis` of the " + which +
                  " entry of x, as float32 (select_last_index: the last of equals; keepdims keeps the axis with size 1)")
            .add(r, build_arg, emit_arg);
    }
    OpDef(kHardmax, {"x"}, infer_hardmax, "y = 1 at the first largest entry of x along axis `axis`, 0 elsewhere")
        .inplace()
        .add(r, build_hardmax, emit_hardmax);
    OpDef(kDet, {"x"}, infer_det, "y = the determinant of each square matrix of x over the axes `axes` (rows, columns)")
        .x_order(x_axes_last)
        .add(r, build_det, emit_det);
}

}  // namespace graft::ops
