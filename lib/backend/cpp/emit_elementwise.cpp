// C++ emitters: Activation, Softmax, Merge, BiasAdd, Identity and BatchNormalization (folded
// into one scale and shift per channel at generation time).
#include <cmath>

#include "ops/emit_util.hpp"
#include "ops/legacy_families.hpp"

namespace graft::cpp {

namespace {

using i64 = std::int64_t;

void emit_split(EmitContext& ctx, const ops::Split3& s, const Axis& axis) {
    ctx.constant_i64("outer", s.outer, "axes before " + axis.name());
    ctx.constant_i64("len", s.len, "axis " + axis.name());
    ctx.constant_i64("inner", s.inner, "axes after " + axis.name());
}

void emit_activation(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const std::string act = act_expr(ctx, op.attr<std::string>("activation"));
    ctx.constant_i64("n", op.input("x")->numel(), "elements");
    ctx.line("graft_rt::activation({}, {}, n, {});", ctx.input("x"), ctx.output("y"), act);
}

void emit_softmax(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Axis axis = op.attrs().get_axis("axis", op.describe());
    use(ctx, "softmax");
    emit_split(ctx, ops::split_at(*op.input("x"), axis), axis);
    ctx.line("graft_rt::softmax({}, {}, outer, len, inner);", ctx.input("x"), ctx.output("y"));
}

void emit_merge(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto kind = op.attr<std::string>("op");
    const auto& ins = op.inputs();
    const std::string y = ctx.output("y");
    ctx.constant_i64("n", op.output("y")->numel(), "elements");
    use(ctx, "core");
    if (ins.size() == 1) {
        ctx.line("graft_rt::copy({}, {}, n);", ctx.input(ins[0].first), y);
        return;
    }
    use(ctx, "merge");
    const std::string m = kind == "avg" ? "add" : kind;
    if (m != "add" && m != "sub" && m != "mul" && m != "max" && m != "min")
        throw UnsupportedError(op.describe() + ": merge '" + kind + "'");
    ctx.comment("y may be x0's memory (in place): each step reads an element before writing it");
    std::string acc = ctx.input(ins[0].first);
    for (std::size_t i = 1; i < ins.size(); ++i) {
        ctx.line("graft_rt::merge2(graft_rt::MergeOp::{}, {}, {}, {}, n);", m, acc, ctx.input(ins[i].first), y);
        acc = y;
    }
    if (kind == "avg") ctx.line("graft_rt::scale({}, {}, n, {});", y, y, 1.f / static_cast<float>(ins.size()));
}

void emit_bias_add(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Axis axis = op.attrs().get_axis("axis", op.describe());
    use(ctx, "channel_affine");
    emit_split(ctx, ops::split_at(*op.input("x"), axis), axis);
    ctx.line("graft_rt::channel_affine({}, nullptr, {}, {}, outer, len, inner);", ctx.input("x"), ctx.input("b"), ctx.output("y"));
}

void emit_identity(EmitContext& ctx) {
    use(ctx, "core");
    ctx.comment("the memory plan usually gives y x's bytes; then there is nothing to copy");
    ctx.constant_i64("n", ctx.op().input("x")->numel(), "elements");
    ctx.line("graft_rt::copy({}, {}, n);", ctx.input("x"), ctx.output("y"));
}

void emit_batch_norm(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Axis axis = op.attrs().get_axis("axis", op.describe());
    const auto sp = ops::split_at(*op.input("x"), axis);
    auto constant = [&](const char* n) -> const std::vector<float>* {
        auto* v = op.input_or_null(n);
        if (!v) return nullptr;
        if (!v->is_constant()) throw UnsupportedError(op.describe() + ": '" + n + "' must be a constant");
        return &static_cast<const ConstantVariable*>(v)->data();
    };
    const auto* mean = constant("mean");
    const auto* var = constant("var");
    const auto* gamma = constant("gamma");
    const auto* beta = constant("beta");
    const double eps = op.attr<double>("epsilon");
    std::vector<float> scale(static_cast<std::size_t>(sp.len)), shift(static_cast<std::size_t>(sp.len));
    for (std::size_t i = 0; i < scale.size(); ++i) {
        const double s = (gamma ? (*gamma)[i] : 1.0) / std::sqrt(static_cast<double>((*var)[i]) + eps);
        scale[i] = static_cast<float>(s);
        shift[i] = static_cast<float>((beta ? (*beta)[i] : 0.0) - (*mean)[i] * s);
    }
    use(ctx, "channel_affine");
    ctx.comment("scale = gamma / sqrt(var + epsilon), shift = beta - mean * scale (computed by graft)");
    const std::string sc = ctx.constant("scale", std::move(scale)), sh = ctx.constant("shift", std::move(shift));
    emit_split(ctx, sp, axis);
    ctx.line("graft_rt::channel_affine({}, {}, {}, {}, outer, len, inner);", ctx.input("x"), sc, sh, ctx.output("y"));
}

}  // namespace

void register_elementwise_emitters(Registry& r) {
    r.add_generator<cpp::Backend>("Activation", emit_activation);
    r.add_generator<cpp::Backend>("Softmax", emit_softmax);
    r.add_generator<cpp::Backend>("Merge", emit_merge);
    r.add_generator<cpp::Backend>("BiasAdd", emit_bias_add);
    r.add_generator<cpp::Backend>("Identity", emit_identity);
    r.add_generator<cpp::Backend>("BatchNormalization", emit_batch_norm);
}

}  // namespace graft::cpp
