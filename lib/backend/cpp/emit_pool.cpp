// C++ emitters: Pool2D, Pool3D (max / average windows over NHWC / NDHWC) and GlobalPool.
#include "ops/emit_util.hpp"
#include "ops/legacy_families.hpp"

namespace graft::cpp {

namespace {

using i64 = std::int64_t;

void emit_pool(EmitContext& ctx, int nd) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const Variable& y = *op.output("y");
    const auto k = op.attr<std::vector<i64>>("pool_size"), s = op.attr<std::vector<i64>>("strides");
    const auto padding = op.attr<std::string>("padding");
    const auto kind = op.attr<std::string>("kind");
    if (kind != "max" && kind != "avg") throw UnsupportedError(op.describe() + ": pooling kind '" + kind + "'");
    const std::size_t o = nd == 3 ? 1 : 0;
    const i64 D = nd == 3 ? x.size(Axis::D) : 1, H = x.size(Axis::H), W = x.size(Axis::W);
    const i64 kd = nd == 3 ? k.at(0) : 1, sd = nd == 3 ? s.at(0) : 1;
    const i64 pf = nd == 3 ? ops::conv_span(op, D, kd, sd, 1, padding).pad_begin : 0;
    const i64 pt = ops::conv_span(op, H, k.at(o), s.at(o), 1, padding).pad_begin;
    const i64 pl = ops::conv_span(op, W, k.at(o + 1), s.at(o + 1), 1, padding).pad_begin;
    use(ctx, "pool");
    emit_struct(ctx, "PoolParams", "p",
                {{"n, d, h, w, c", csv({x.size(Axis::N), D, H, W, x.size(Axis::C)})},
                 {"kd, kh, kw", csv({kd, k.at(o), k.at(o + 1)})},
                 {"stride_d, stride_h, stride_w", csv({sd, s.at(o), s.at(o + 1)})},
                 {"pad_front, pad_top, pad_left (" + padding + ")", csv({pf, pt, pl})},
                 {"od, oh, ow", csv({nd == 3 ? y.size(Axis::D) : 1, y.size(Axis::H), y.size(Axis::W)})}});
    ctx.line("graft_rt::pool_ndhwc({}, {}, p, /*max=*/{});", ctx.input("x"), ctx.output("y"), kind == "max");
}

void emit_global_pool(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const auto axes = op.attrs().get_order("axes", op.describe());
    const auto kind = op.attr<std::string>("kind");
    const std::size_t na = axes.ndim();
    use(ctx, "pool");
    ctx.constant_i64("outer", ops::prod(x.shape(), 0, 1), "batch");
    ctx.constant_i64("mid", ops::prod(x.shape(), 1, 1 + na), "reduced: " + axes.str());
    ctx.constant_i64("inner", ops::prod(x.shape(), 1 + na, x.ndim()), "kept");
    ctx.line("graft_rt::reduce_mid({}, {}, outer, mid, inner, /*max=*/{});", ctx.input("x"), ctx.output("y"), kind == "max");
}

}  // namespace

void register_pool_emitters(Registry& r) {
    r.add_generator<cpp::Backend>("Pool2D", [](EmitContext& c) { emit_pool(c, 2); });
    r.add_generator<cpp::Backend>("Pool3D", [](EmitContext& c) { emit_pool(c, 3); });
    r.add_generator<cpp::Backend>("GlobalPool", emit_global_pool);
}

}  // namespace graft::cpp
