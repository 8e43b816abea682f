// The pooling family: schemas, native kernel builders and C++ emitters of Pool2D, Pool3D and
// GlobalPool. Pool2D runs on the vectorized cpu::pool2d_nhwc natively; Pool3D, GlobalPool and
// all generated code run graft_rt's reference kernels (graft_rt/pool.hpp).
#include "ops/pool/pool.hpp"

#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

using i64 = std::int64_t;

PoolAttrs PoolAttrs::parse(const Operator& op) {
    PoolAttrs a;
    a.nd = op.type() == kPool3D ? 3 : 2;
    if (op.type() == kPoolArgMax) {
        const auto k = op.attr<std::vector<i64>>("pool_size").size();
        if (k != 2 && k != 3) shape_fail(op, "pool_size needs 2 or 3 entries");
        a.nd = static_cast<int>(k);
        a.column_major = op.attr_or<bool>("column_major", false);
    }
    const auto kind = op.attr<std::string>("kind");
    if (kind != "max" && kind != "avg")
        throw UnsupportedError(op.describe() + ": pooling kind '" + kind + "' (expected max or avg)");
    a.max = kind == "max";
    a.pool_size = op.attr<std::vector<i64>>("pool_size");
    a.strides = op.attr<std::vector<i64>>("strides");
    a.padding = op.attr<std::string>("padding");
    const auto nd = static_cast<std::size_t>(a.nd);
    if (a.pool_size.size() != nd || a.strides.size() != nd)
        shape_fail(op, "pool_size and strides need " + std::to_string(nd) + " entries");
    if (a.padding == "causal") shape_fail(op, "causal padding is not a pooling padding");
    if (a.padding == "explicit") {
        a.pads = op.attr<std::vector<i64>>("pads");
        a.ceil_mode = op.attr_or<bool>("ceil_mode", false);
        if (a.pads.size() != 2 * nd) shape_fail(op, "pads need " + std::to_string(2 * nd) + " entries (begin, then end)");
    }
    a.dilations = op.attr_or<std::vector<i64>>("dilations", std::vector<i64>(nd, 1));
    if (a.dilations.size() != nd) shape_fail(op, "dilations need " + std::to_string(nd) + " entries");
    for (auto d : a.dilations)
        if (d < 1) shape_fail(op, "dilation " + std::to_string(d) + " (expected at least 1)");
    return a;
}

graft_rt::PoolParams PoolAttrs::geometry(const Operator& op) const {
    const Variable& x = in(op, "x");
    expect_axes(op, x, nd == 3 ? OrderNDHWC : OrderNHWC, "input");
    const std::size_t o = nd == 3 ? 1 : 0;  // the index of H in pool_size and strides
    graft_rt::PoolParams p{};
    p.n = x.size(Axis::N), p.h = x.size(Axis::H), p.w = x.size(Axis::W), p.c = x.size(Axis::C);
    p.d = nd == 3 ? x.size(Axis::D) : 1;
    p.kd = nd == 3 ? pool_size[0] : 1, p.kh = pool_size[o], p.kw = pool_size[o + 1];
    p.stride_d = nd == 3 ? strides[0] : 1, p.stride_h = strides[o], p.stride_w = strides[o + 1];
    p.dil_d = nd == 3 ? dilations[0] : 1, p.dil_h = dilations[o], p.dil_w = dilations[o + 1];
    const auto n = static_cast<std::size_t>(nd);
    auto span = [&](i64 in, i64 k, i64 stride, std::size_t axis) {  // axis: index in pool_size
        if (padding != "explicit") return conv_span(op, in, k, stride, dilations[axis], padding);
        return explicit_span(op, in, k, stride, dilations[axis], pads[axis], pads[axis + n], ceil_mode);
    };
    const auto sd = nd == 3 ? span(p.d, p.kd, p.stride_d, 0) : conv_span(op, p.d, p.kd, p.stride_d, 1, "valid");
    const auto sh = span(p.h, p.kh, p.stride_h, o);
    const auto sw = span(p.w, p.kw, p.stride_w, o + 1);
    p.od = sd.out, p.pad_front = sd.pad_begin, p.oh = sh.out, p.pad_top = sh.pad_begin, p.ow = sw.out, p.pad_left = sw.pad_begin;
    return p;
}

GlobalPoolAttrs GlobalPoolAttrs::parse(const Operator& op) {
    GlobalPoolAttrs a;
    const auto kind = op.attr<std::string>("kind");
    if (kind != "max" && kind != "avg")
        throw UnsupportedError(op.describe() + ": pooling kind '" + kind + "' (expected max or avg)");
    a.max = kind == "max";
    a.axes = op.attrs().get_order("axes", op.describe());
    return a;
}

Order GlobalPoolAttrs::input_order(const Operator& op) const {
    const Variable& x = in(op, "x");
    if (!x.order().has(Axis::N)) shape_fail(op, "input " + x.describe() + " has no batch axis N");
    std::vector<Axis> o{Axis::N};
    for (const auto& a : axes.axes()) {
        if (!x.order().has(a) || a == Axis::N) shape_fail(op, "cannot reduce axis " + a.name() + " of " + x.describe());
        o.push_back(a);
    }
    for (const auto& a : x.order().axes())
        if (a != Axis::N && !axes.has(a)) o.push_back(a);
    return Order(std::move(o));
}

GlobalPoolAttrs::Reduce GlobalPoolAttrs::geometry(const Operator& op) const {
    const Shape& s = in(op, "x").shape();
    const std::size_t na = axes.ndim();
    return {prod(s, 0, 1), prod(s, 1, 1 + na), prod(s, 1 + na, s.size())};
}

namespace {

// ---- Pool2D / Pool3D ---------------------------------------------------------------------------

Outputs infer_pool(const Operator& op) {
    const auto a = PoolAttrs::parse(op);
    const auto g = a.geometry(op);
    if (a.nd == 3) return {{"y", {OrderNDHWC, {g.n, g.od, g.oh, g.ow, g.c}}}};
    return {{"y", {OrderNHWC, {g.n, g.oh, g.ow, g.c}}}};
}

std::unique_ptr<native::Kernel> build_pool(native::BuildContext& b) {
    const auto a = PoolAttrs::parse(b.op());
    const auto g = a.geometry(b.op());
    const bool max = a.max;
    auto x = b.in("x"), y = b.out("y");
    if (a.nd == 2 && g.dil_h == 1 && g.dil_w == 1)  // the vectorized kernel
        return native::make_kernel([=](const native::RunContext& c) { cpu::pool2d_nhwc(c.at(x), c.at(y), g, max, c.pool); });
    return native::make_kernel([=](const native::RunContext& c) { graft_rt::pool_ndhwc(c.at(x), c.at(y), g, max); });
}

/// `const graft_rt::PoolParams p` in generated code.
void emit_pool_params(cpp::EmitContext& ctx, const PoolAttrs& a, const graft_rt::PoolParams& p) {
    cpp::use(ctx, "pool");
    cpp::emit_struct(ctx, "PoolParams", "p",
                     {{"n, d, h, w, c", cpp::csv({p.n, p.d, p.h, p.w, p.c})},
                      {"kd, kh, kw", cpp::csv({p.kd, p.kh, p.kw})},
                      {"stride_d, stride_h, stride_w", cpp::csv({p.stride_d, p.stride_h, p.stride_w})},
                      {"pad_front, pad_top, pad_left (" + a.padding + ")", cpp::csv({p.pad_front, p.pad_top, p.pad_left})},
                      {"od, oh, ow", cpp::csv({p.od, p.oh, p.ow})},
                      {"dil_d, dil_h, dil_w", cpp::csv({p.dil_d, p.dil_h, p.dil_w})}});
}

void emit_pool(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto a = PoolAttrs::parse(op);
    const auto p = a.geometry(op);
    emit_pool_params(ctx, a, p);
    ctx.line("graft_rt::pool_ndhwc({}, {}, p, /*max=*/{});", ctx.input("x"), ctx.output("y"), a.max);
}

// ---- PoolArgMax ----------------------------------------------------------------------------------

/// The geometry of a PoolArgMax, whose input must be small enough for its indices to be exact.
graft_rt::PoolParams argmax_geometry(const Operator& op, const PoolAttrs& a) {
    if (!a.max) throw UnsupportedError(op.describe() + ": the positions of an average pooling");
    const auto g = a.geometry(op);
    if (numel(in(op, "x").shape()) > (i64{1} << 24))
        throw UnsupportedError(op.describe() + ": indices into " + in(op, "x").describe() +
                               ", beyond 2^24 elements (graft holds them as exact float32 values)");
    return g;
}

Outputs infer_argmax(const Operator& op) {
    const auto a = PoolAttrs::parse(op);
    const auto g = argmax_geometry(op, a);
    if (a.nd == 3) return {{"y", {OrderNDHWC, {g.n, g.od, g.oh, g.ow, g.c}}}};
    return {{"y", {OrderNHWC, {g.n, g.oh, g.ow, g.c}}}};
}

std::unique_ptr<native::Kernel> build_argmax(native::BuildContext& b) {
    const auto a = PoolAttrs::parse(b.op());
    const auto g = argmax_geometry(b.op(), a);
    const bool column_major = a.column_major;
    auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) { graft_rt::pool_argmax_ndhwc(c.at(x), c.at(y), g, column_major); });
}

void emit_argmax(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto a = PoolAttrs::parse(op);
    const auto p = argmax_geometry(op, a);
    emit_pool_params(ctx, a, p);
    ctx.line("graft_rt::pool_argmax_ndhwc({}, {}, p, /*column_major=*/{});", ctx.input("x"), ctx.output("y"), a.column_major);
}

// ---- GlobalPool ----------------------------------------------------------------------------------

Outputs infer_global(const Operator& op) {
    const auto a = GlobalPoolAttrs::parse(op);
    const Variable& x = in(op, "x");
    const Order order = a.input_order(op);
    std::vector<Axis> out;
    Shape shape;
    for (const auto& axis : order.axes()) {
        if (a.axes.has(axis)) continue;
        out.push_back(axis);
        shape.push_back(x.size(axis));
    }
    return {{"y", {Order(std::move(out)), shape}}};
}

std::unique_ptr<native::Kernel> build_global(native::BuildContext& b) {
    const auto a = GlobalPoolAttrs::parse(b.op());
    const auto g = a.geometry(b.op());
    const bool max = a.max;
    auto x = b.in("x"), y = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { graft_rt::reduce_mid(c.at(x), c.at(y), g.outer, g.mid, g.inner, max); });
}

void emit_global(cpp::EmitContext& ctx) {
    const auto a = GlobalPoolAttrs::parse(ctx.op());
    const auto g = a.geometry(ctx.op());
    cpp::use(ctx, "pool");
    ctx.constant_i64("outer", g.outer, "batch");
    ctx.constant_i64("mid", g.mid, "reduced: " + a.axes.str());
    ctx.constant_i64("inner", g.inner, "kept");
    ctx.line("graft_rt::reduce_mid({}, {}, outer, mid, inner, /*max=*/{});", ctx.input("x"), ctx.output("y"), a.max);
}

}  // namespace

void register_pool(Registry& r) {
    OpDef(kPool2D, {"x"}, infer_pool,
          "2-D max/avg pooling over NHWC; attrs kind, pool_size[2], strides[2], "
          "padding valid|same|explicit (pads[4], ceil_mode), dilations[2] (default 1)")
        .x_order(OrderNHWC)
        .add(r, build_pool, emit_pool);
    OpDef(kPool3D, {"x"}, infer_pool,
          "3-D max/avg pooling over NDHWC; attrs kind, pool_size[3], strides[3], "
          "padding valid|same|explicit (pads[6], ceil_mode), dilations[3] (default 1)")
        .x_order(OrderNDHWC)
        .add(r, build_pool, emit_pool);
    OpDef(kPoolArgMax, {"x"}, infer_argmax,
          "where each window of a max pooling (the Pool2D / Pool3D attrs, kind max) takes its maximum: the flat index "
          "into x in N, C, D, H, W order (column_major: N, C, W, H, D), as exact float32 values")
        .x_order([](const Operator& op) { return PoolAttrs::parse(op).nd == 3 ? OrderNDHWC : OrderNHWC; })
        .add(r, build_argmax, emit_argmax);
    OpDef(kGlobalPool, {"x"}, infer_global,
          "max/mean over the axes `axes` (e.g. H, W); the output keeps N and the other axes")
        .x_order([](const Operator& op) { return GlobalPoolAttrs::parse(op).input_order(op); })
        .add(r, build_global, emit_global);
}

}  // namespace graft::ops
