// C++ emitters: LayerNorm, GroupNorm and L2Normalize. Each op asks for its reduced axes last
// (lib/ops/layer_norm.cpp), so the kernels see rows.
#include "ops/emit_util.hpp"
#include "ops/legacy_families.hpp"

namespace graft::cpp {

namespace {

using i64 = std::int64_t;

/// Product of the sizes of `key`'s axes in x.
i64 size_over(const Operator& op, const char* key) {
    i64 k = 1;
    for (const auto& n : op.attr<std::vector<std::string>>(key)) k *= op.input("x")->size(Axis(n));
    return k;
}

std::string axes_text(const Operator& op, const char* key) {
    std::string s;
    for (const auto& n : op.attr<std::vector<std::string>>(key)) s += n;
    return s;
}

void emit_rows(EmitContext& ctx, i64 K, const std::string& what) {
    const i64 n = ctx.op().input("x")->numel();
    ctx.constant_i64("M", K ? n / K : 0, "rows");
    ctx.constant_i64("K", K, what);
}

void emit_layer_norm(EmitContext& ctx) {
    const Operator& op = ctx.op();
    use(ctx, "layer_norm");
    emit_rows(ctx, size_over(op, "axes"), "normalized over axes " + axes_text(op, "axes"));
    ctx.constant_f32("eps", static_cast<float>(op.attr<double>("epsilon")));
    ctx.line("graft_rt::layer_norm({}, {}, {}, {}, M, K, eps);", ctx.input("x"), input_or_null(ctx, "gamma"),
             input_or_null(ctx, "beta"), ctx.output("y"));
}

void emit_group_norm(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const i64 N = x.size(op.attrs().get_axis("batch_axis", op.describe())), C = x.size(op.attrs().get_axis("axis", op.describe()));
    use(ctx, "group_norm");
    ctx.constant_i64("N", N, "batch");
    ctx.constant_i64("S", N * C != 0 ? x.numel() / (N * C) : 0, "positions per channel");
    ctx.constant_i64("C", C, "channels");
    ctx.constant_i64("G", op.attr<i64>("groups"), "groups");
    ctx.constant_f32("eps", static_cast<float>(op.attr<double>("epsilon")));
    ctx.line("graft_rt::group_norm({}, {}, {}, {}, N, S, C, G, eps);", ctx.input("x"), input_or_null(ctx, "gamma"),
             input_or_null(ctx, "beta"), ctx.output("y"));
}

void emit_l2_normalize(EmitContext& ctx) {
    const Operator& op = ctx.op();
    use(ctx, "l2_normalize");
    emit_rows(ctx, size_over(op, "axes"), "normalized over axes " + axes_text(op, "axes"));
    ctx.constant_f32("eps", static_cast<float>(op.attr<double>("epsilon")));
    ctx.line("graft_rt::l2_normalize({}, {}, M, K, eps);", ctx.input("x"), ctx.output("y"));
}

}  // namespace

void register_norm_emitters(Registry& r) {
    r.add_generator<cpp::Backend>("LayerNorm", emit_layer_norm);
    r.add_generator<cpp::Backend>("GroupNorm", emit_group_norm);
    r.add_generator<cpp::Backend>("L2Normalize", emit_l2_normalize);
}

}  // namespace graft::cpp
