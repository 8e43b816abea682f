// The normalization family (normalization.hpp): schemas, native kernel builders and C++ emitters
// of LayerNorm, GroupNorm, L2Normalize and LRN. Both backends run graft_rt/normalization.hpp.
#include "ops/normalization/normalization.hpp"

#include "cpu/threadpool.hpp"
#include "cpu/vmath.hpp"
#include "graft_rt/normalization.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

RowNormAttrs RowNormAttrs::parse(const Operator& op) {
    return {axes_attr(op, "axes"), static_cast<float>(op.attr<double>("epsilon"))};
}

Order RowNormAttrs::order(const Operator& op) const { return axes_last(op, in(op, "x"), axes); }

RowNormAttrs::Rows RowNormAttrs::rows(const Variable& x) const {
    const std::int64_t k = size_over(x, axes);
    return {k != 0 ? x.numel() / k : 0, k};
}

std::string RowNormAttrs::names() const {
    std::string s;
    for (const auto& a : axes) s += a.name();
    return s;
}

GroupNormAttrs GroupNormAttrs::parse(const Operator& op) {
    return {op.attrs().get_axis("batch_axis", op.describe()), op.attrs().get_axis("axis", op.describe()),
            op.attr<std::int64_t>("groups"), static_cast<float>(op.attr<double>("epsilon"))};
}

Order GroupNormAttrs::order(const Operator& op) const {
    const Variable& x = in(op, "x");
    if (batch == axis || !x.order().has(batch) || !x.order().has(axis))
        shape_fail(op,
                   "input " + x.describe() + " needs distinct axes " + batch.name() + " (batch) and " + axis.name());
    std::vector<Axis> out{batch};
    for (const auto& a : x.order().axes())
        if (a != batch && a != axis) out.push_back(a);
    out.push_back(axis);
    return Order(std::move(out));
}

GroupNormAttrs::Geometry GroupNormAttrs::geometry(const Variable& x) const {
    const std::int64_t n = x.size(batch), c = x.size(axis);
    return {n, n * c != 0 ? x.numel() / (n * c) : 0, c};
}

LrnAttrs LrnAttrs::parse(const Operator& op) {
    LrnAttrs a{op.attrs().get_axis("axis", op.describe()), op.attr<std::int64_t>("size"),
               static_cast<float>(op.attr<double>("alpha")), static_cast<float>(op.attr<double>("beta")),
               static_cast<float>(op.attr<double>("bias"))};
    if (a.size < 1) shape_fail(op, "size " + std::to_string(a.size) + " (expected at least 1)");
    if (!in(op, "x").order().has(a.axis))
        shape_fail(op, "input " + in(op, "x").describe() + " has no axis " + a.axis.name());
    return a;
}

namespace {

using i64 = std::int64_t;

// ---- schemas ----------------------------------------------------------------------------------

Outputs infer_layer_norm(const Operator& op) {
    const auto a = RowNormAttrs::parse(op);
    const Order o = a.order(op);
    expect_params(op, size_over(in(op, "x"), a.axes), {"gamma", "beta"});
    return like_x_in(op, o);
}

Outputs infer_l2_normalize(const Operator& op) { return like_x_in(op, RowNormAttrs::parse(op).order(op)); }

/// LayerNorm and L2Normalize read x as rows: `axes` last.
Order rows_order(const Operator& op) { return RowNormAttrs::parse(op).order(op); }

Outputs infer_group_norm(const Operator& op) {
    const auto a = GroupNormAttrs::parse(op);
    const Order o = a.order(op);
    const i64 c = in(op, "x").size(a.axis);
    if (a.groups < 1 || c % a.groups != 0)
        shape_fail(op, std::to_string(a.groups) + " groups do not divide the " + std::to_string(c) + " channels of " +
                           in(op, "x").describe());
    expect_params(op, c, {"gamma", "beta"});
    return like_x_in(op, o);
}

// ---- native kernels ---------------------------------------------------------------------------

/// LayerNorm and GroupNorm: a kernel calling `norm(x, gamma, beta, y, pool)` on the op's input x, its
/// optional inputs gamma and beta (null when absent) and its output y.
template <class Norm>
std::unique_ptr<native::Kernel> scaled_norm_kernel(native::BuildContext& b, Norm norm) {
    const auto x = b.in("x"), y = b.out("y");
    const auto gamma = optional_in(b, "gamma"), beta = optional_in(b, "beta");
    return native::make_kernel([=](const native::RunContext& c) {
        norm(c.at(x), at_or_null(c, gamma), at_or_null(c, beta), c.at(y), c.pool);
    });
}

std::unique_ptr<native::Kernel> build_layer_norm(native::BuildContext& b) {
    const auto a = RowNormAttrs::parse(b.op());
    const auto r = a.rows(*b.op().input("x"));
    return scaled_norm_kernel(b, [=](const float* x, const float* gamma, const float* beta, float* y,
                                     cpu::ThreadPool* pool) {
        cpu::parallel_ranges(pool, r.m, r.m * r.k, cpu::kMinRowFloatsPerTask, [&](std::int64_t r0, std::int64_t r1) {
            cpu::vmath::layer_norm_rows(x + r0 * r.k, gamma, beta, y + r0 * r.k, r1 - r0, r.k, a.epsilon);
        });
    });
}

std::unique_ptr<native::Kernel> build_group_norm(native::BuildContext& b) {
    const auto a = GroupNormAttrs::parse(b.op());
    const auto g = a.geometry(*b.op().input("x"));
    return scaled_norm_kernel(b,
                              [=](const float* x, const float* gamma, const float* beta, float* y, cpu::ThreadPool*) {
                                  graft_rt::group_norm(x, gamma, beta, y, g.n, g.s, g.c, a.groups, a.epsilon);
                              });
}

std::unique_ptr<native::Kernel> build_l2_normalize(native::BuildContext& b) {
    const auto a = RowNormAttrs::parse(b.op());
    const auto r = a.rows(*b.op().input("x"));
    auto x = b.in("x"), y = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { graft_rt::l2_normalize(c.at(x), c.at(y), r.m, r.k, a.epsilon); });
}

Outputs infer_lrn(const Operator& op) {
    LrnAttrs::parse(op);
    return like_x(op);
}

std::unique_ptr<native::Kernel> build_lrn(native::BuildContext& b) {
    const auto a = LrnAttrs::parse(b.op());
    const Split3 s = split_at(in(b.op(), "x"), a.axis);
    auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::lrn(c.at(x), c.at(y), s.outer, s.len, s.inner, a.size, a.alpha, a.beta, a.bias);
    });
}

// ---- C++ emitters -----------------------------------------------------------------------------

/// The rows of x as constants M and K, and eps.
void emit_rows(cpp::EmitContext& ctx) {
    const auto a = RowNormAttrs::parse(ctx.op());
    const auto r = a.rows(*ctx.op().input("x"));
    cpp::use(ctx, "normalization");
    ctx.constant_i64("M", r.m, "rows");
    ctx.constant_i64("K", r.k, "normalized over axes " + a.names());
    ctx.constant_f32("eps", a.epsilon);
}

void emit_layer_norm(cpp::EmitContext& ctx) {
    emit_rows(ctx);
    ctx.line("graft_rt::layer_norm({}, {}, {}, {}, M, K, eps);", ctx.input("x"), cpp::input_or_null(ctx, "gamma"),
             cpp::input_or_null(ctx, "beta"), ctx.output("y"));
}

void emit_l2_normalize(cpp::EmitContext& ctx) {
    emit_rows(ctx);
    ctx.line("graft_rt::l2_normalize({}, {}, M, K, eps);", ctx.input("x"), ctx.output("y"));
}

void emit_lrn(cpp::EmitContext& ctx) {
    const auto a = LrnAttrs::parse(ctx.op());
    cpp::use(ctx, "normalization");
    cpp::emit_split(ctx, split_at(in(ctx.op(), "x"), a.axis), a.axis);
    ctx.line("graft_rt::lrn({}, {}, outer, len, inner, {}, {}, {}, {});", ctx.input("x"), ctx.output("y"), a.size,
             a.alpha, a.beta, a.bias);
}

void emit_group_norm(cpp::EmitContext& ctx) {
    const auto a = GroupNormAttrs::parse(ctx.op());
    const auto g = a.geometry(*ctx.op().input("x"));
    cpp::use(ctx, "normalization");
    ctx.constant_i64("N", g.n, "batch");
    ctx.constant_i64("S", g.s, "positions per channel");
    ctx.constant_i64("C", g.c, "channels");
    ctx.constant_i64("G", a.groups, "groups");
    ctx.constant_f32("eps", a.epsilon);
    ctx.line("graft_rt::group_norm({}, {}, {}, {}, N, S, C, G, eps);", ctx.input("x"), cpp::input_or_null(ctx, "gamma"),
             cpp::input_or_null(ctx, "beta"), ctx.output("y"));
}

}  // namespace

void register_normalization(Registry& r) {
    OpDef(kLayerNorm, {"x", "gamma?", "beta?"}, infer_layer_norm,
          "layer normalization over `axes` (attr epsilon); gamma/beta flattened over `axes` in that order")
        .x_order(rows_order)
        .inplace()
        .add(r, build_layer_norm, emit_layer_norm);
    OpDef(kGroupNorm, {"x", "gamma?", "beta?"}, infer_group_norm,
          "group normalization: `groups` groups of axis `axis`, statistics per batch_axis item over all other axes")
        .x_order([](const Operator& op) { return GroupNormAttrs::parse(op).order(op); })
        .inplace()
        .add(r, build_group_norm, emit_group_norm);
    OpDef(kL2Normalize, {"x"}, infer_l2_normalize, "y = x / sqrt(max(sum over `axes` of x^2, epsilon))")
        .x_order(rows_order)
        .inplace()
        .add(r, build_l2_normalize, emit_l2_normalize);
    OpDef(kLRN, {"x"}, infer_lrn,
          "local response normalization: y = x / (bias + alpha / size * sum of x^2 over `size` neighbours along "
          "`axis`) ^ beta")
        .add(r, build_lrn, emit_lrn);
}

}  // namespace graft::ops
