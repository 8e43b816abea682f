// C++ emitters: Transpose, Reshape, Concat, Reverse, Pad, Upsample and ResizeBilinear.
#include "ops/emit_util.hpp"
#include "ops/legacy_families.hpp"

namespace graft::cpp {

namespace {

using i64 = std::int64_t;

void emit_transpose(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const Order to = op.attrs().get_order("order", op.describe());
    const auto perm = x.order().permutation_to(to);
    if (perm.size() > 8) throw UnsupportedError(op.describe() + ": transpose of rank " + std::to_string(perm.size()) + " (at most 8)");
    use(ctx, "transpose");
    ctx.constant_list("in_shape", x.shape(), x.order().str());
    std::string p;
    for (std::size_t i = 0; i < perm.size(); ++i) p += (i ? ", " : "") + std::to_string(perm[i]);
    ctx.line("constexpr int perm[] = {{{}}};  // {} -> {}", p, x.order().str(), to.str());
    ctx.line("graft_rt::transpose({}, {}, in_shape, perm, {});", ctx.input("x"), ctx.output("y"), perm.size());
}

void emit_reshape(EmitContext& ctx) {
    use(ctx, "core");
    ctx.comment("a view: the memory plan gives y x's bytes, so this copies only when it could not");
    ctx.constant_i64("n", ctx.op().input("x")->numel(), "elements");
    ctx.line("graft_rt::copy({}, {}, n);", ctx.input("x"), ctx.output("y"));
}

void emit_concat(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Axis axis = op.attrs().get_axis("axis", op.describe());
    const auto sy = ops::split_at(*op.output("y"), axis);
    use(ctx, "concat");
    ctx.constant_i64("outer", sy.outer, "axes before " + axis.name());
    ctx.constant_i64("inner", sy.inner, "axes after " + axis.name());
    ctx.constant_i64("total", sy.len, "axis " + axis.name() + " of y");
    i64 at = 0;
    for (const auto& [port, v] : op.inputs()) {
        const i64 len = ops::split_at(*v, axis).len;
        ctx.line("graft_rt::concat_part({}, {}, outer, {}, inner, total, {});", ctx.input(port), ctx.output("y"), len, at);
        at += len;
    }
}

void emit_reverse(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Axis axis = op.attrs().get_axis("axis", op.describe());
    const auto s = ops::split_at(*op.input("x"), axis);
    use(ctx, "reverse");
    ctx.constant_i64("outer", s.outer, "axes before " + axis.name());
    ctx.constant_i64("len", s.len, "axis " + axis.name() + ", reversed");
    ctx.constant_i64("inner", s.inner, "axes after " + axis.name());
    ctx.line("graft_rt::reverse({}, {}, outer, len, inner);", ctx.input("x"), ctx.output("y"));
}

void emit_pad(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const Variable& y = *op.output("y");
    const auto axes = op.attrs().get_order("axes", op.describe());
    const auto begin = op.attr<std::vector<i64>>("begin");
    std::vector<i64> b(x.ndim(), 0);
    for (std::size_t i = 0; i < axes.ndim(); ++i) b[x.order().index(axes[i])] = begin.at(i);
    if (x.ndim() > 8) throw UnsupportedError(op.describe() + ": padding of rank " + std::to_string(x.ndim()) + " (at most 8)");
    use(ctx, "pad");
    ctx.constant_list("in_shape", x.shape(), x.order().str());
    ctx.constant_list("out_shape", y.shape());
    ctx.constant_list("begin", b, "leading zeros (negative: cropped)");
    ctx.line("graft_rt::pad_nd({}, {}, in_shape, out_shape, begin, {});", ctx.input("x"), ctx.output("y"), x.ndim());
}

void emit_upsample(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const Variable& y = *op.output("y");
    std::vector<i64> f(x.ndim(), 1);
    for (std::size_t i = 0; i < x.ndim(); ++i) f[i] = x.shape()[i] ? y.shape()[i] / x.shape()[i] : 1;
    if (x.ndim() > 8) throw UnsupportedError(op.describe() + ": upsampling of rank " + std::to_string(x.ndim()) + " (at most 8)");
    use(ctx, "upsample");
    ctx.constant_list("in_shape", x.shape(), x.order().str());
    ctx.constant_list("factors", f);
    ctx.line("graft_rt::upsample_nearest({}, {}, in_shape, factors, {});", ctx.input("x"), ctx.output("y"), x.ndim());
}

void emit_resize(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const Variable& y = *op.output("y");
    use(ctx, "resize_bilinear");
    ctx.constant_i64("N", x.size(Axis::N));
    ctx.constant_i64("H", x.size(Axis::H));
    ctx.constant_i64("W", x.size(Axis::W));
    ctx.constant_i64("C", x.size(Axis::C));
    ctx.constant_i64("OH", y.size(Axis::H));
    ctx.constant_i64("OW", y.size(Axis::W));
    ctx.line("graft_rt::resize_bilinear_nhwc({}, {}, N, H, W, C, OH, OW, /*half_pixel=*/{});", ctx.input("x"), ctx.output("y"),
             op.attr<bool>("half_pixel"));
}

}  // namespace

void register_shape_emitters(Registry& r) {
    r.add_generator<cpp::Backend>("Transpose", emit_transpose);
    r.add_generator<cpp::Backend>("Reshape", emit_reshape);
    r.add_generator<cpp::Backend>("Concat", emit_concat);
    r.add_generator<cpp::Backend>("Reverse", emit_reverse);
    r.add_generator<cpp::Backend>("Pad", emit_pad);
    r.add_generator<cpp::Backend>("Upsample", emit_upsample);
    r.add_generator<cpp::Backend>("ResizeBilinear", emit_resize);
}

}  // namespace graft::cpp
