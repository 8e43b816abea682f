// C++ emitters: Affine and PReLU. Each op asks for its parameter axes last (lib/ops/layer_norm.cpp),
// so the kernels see rows. (LayerNorm, GroupNorm, L2Normalize: lib/ops/normalization/.)
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

void emit_affine(EmitContext& ctx) {
    const Operator& op = ctx.op();
    use(ctx, "channel_affine");
    emit_rows(ctx, size_over(op, "axes"), "parameters over axes " + axes_text(op, "axes"));
    ctx.line("graft_rt::channel_affine({}, {}, {}, {}, M, K, 1);", ctx.input("x"), ctx.input("scale"), ctx.input("shift"),
             ctx.output("y"));
}

void emit_prelu(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const i64 K = op.input("alpha")->numel();
    use(ctx, "prelu");
    ctx.constant_i64("N", K ? op.input("x")->numel() / K : 0, "batch");
    ctx.constant_i64("K", K, "one alpha each");
    ctx.line("graft_rt::prelu({}, {}, {}, N, K);", ctx.input("x"), ctx.input("alpha"), ctx.output("y"));
}

}  // namespace

void register_norm_emitters(Registry& r) {
    r.add_generator<cpp::Backend>("Affine", emit_affine);
    r.add_generator<cpp::Backend>("PReLU", emit_prelu);
}

}  // namespace graft::cpp
