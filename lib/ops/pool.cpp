// Pooling: Pool2D (max/avg over NHWC windows) and GlobalPool (max/mean over spatial axes).
#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

cpu::Pool pool_kind(const Operator& op) {
    auto k = op.attr<std::string>("kind");
    if (k == "max") return cpu::Pool::max;
    if (k == "avg") return cpu::Pool::avg;
    throw UnsupportedError(op.describe() + ": pooling kind '" + k + "' (expected max or avg)");
}

cpu::Pool2DParams pool_geometry(const Operator& op) {
    const Variable& x = in(op, "x");
    expect_axes(op, x, OrderNHWC, "input");
    auto size = op.attr<std::vector<std::int64_t>>("pool_size");
    auto strides = op.attr<std::vector<std::int64_t>>("strides");
    auto padding = op.attr<std::string>("padding");
    if (size.size() != 2 || strides.size() != 2) shape_fail(op, "pool_size and strides need 2 entries");
    pool_kind(op);
    cpu::Pool2DParams p{};
    p.n = x.size(Axis::N), p.h = x.size(Axis::H), p.w = x.size(Axis::W), p.c = x.size(Axis::C);
    p.kh = size[0], p.kw = size[1], p.stride_h = strides[0], p.stride_w = strides[1];
    auto sh = conv_span(op, p.h, p.kh, p.stride_h, 1, padding);
    auto sw = conv_span(op, p.w, p.kw, p.stride_w, 1, padding);
    p.oh = sh.out, p.pad_top = sh.pad_begin, p.ow = sw.out, p.pad_left = sw.pad_begin;
    return p;
}

/// GlobalPool reduces `axes` of x: laid out as [N, axes..., rest...], it is a reduction of
/// the middle block.
Order global_in_order(const Operator& op) {
    const Variable& x = in(op, "x");
    auto axes = op.attrs().get_order("axes", op.describe());
    std::vector<Axis> o{Axis::N};
    for (const auto& a : axes.axes()) {
        if (!x.order().has(a) || a == Axis::N) shape_fail(op, "cannot reduce axis " + a.name() + " of " + x.describe());
        o.push_back(a);
    }
    for (const auto& a : x.order().axes())
        if (a != Axis::N && !axes.has(a)) o.push_back(a);
    if (!x.order().has(Axis::N)) shape_fail(op, "input " + x.describe() + " has no batch axis N");
    return Order(std::move(o));
}

Outputs infer_global(const Operator& op) {
    const Variable& x = in(op, "x");
    pool_kind(op);
    auto order = global_in_order(op);
    auto naxes = op.attrs().get_order("axes", op.describe()).ndim();
    std::vector<Axis> out;
    Shape shape;
    for (std::size_t i = 0; i < order.ndim(); ++i) {
        if (i >= 1 && i <= naxes) continue;
        out.push_back(order[i]);
        shape.push_back(x.size(order[i]));
    }
    return {{"y", {Order(std::move(out)), shape}}};
}

}  // namespace

void register_pool(Registry& r) {
    OpSchema p;
    p.type = "Pool2D";
    p.inputs = {"x"};
    p.infer = [](const Operator& op) -> Outputs {
        auto g = pool_geometry(op);
        return {{"y", {OrderNHWC, {g.n, g.oh, g.ow, g.c}}}};
    };
    p.required_order = [](const Operator&, const std::string&) { return std::optional<Order>(OrderNHWC); };
    p.doc = "2-D max/avg pooling over NHWC; attrs kind, pool_size[2], strides[2], padding valid|same";
    r.add_op(std::move(p));
    r.add_generator<native::Backend>("Pool2D", [](native::BuildContext& b) {
        auto g = pool_geometry(b.op());
        auto kind = pool_kind(b.op());
        auto x = b.in("x"), y = b.out("y");
        return native::make_kernel([=](const native::RunContext& c) { cpu::pool2d_nhwc(c.at(x), c.at(y), g, kind); });
    });

    OpSchema g;
    g.type = "GlobalPool";
    g.inputs = {"x"};
    g.infer = infer_global;
    g.required_order = [](const Operator& op, const std::string&) { return std::optional<Order>(global_in_order(op)); };
    g.doc = "max/mean over the axes `axes` (e.g. H, W); the output keeps N and the other axes";
    r.add_op(std::move(g));
    r.add_generator<native::Backend>("GlobalPool", [](native::BuildContext& b) {
        const Operator& op = b.op();
        const Variable& x = *op.input("x");
        auto naxes = op.attrs().get_order("axes", op.describe()).ndim();
        std::int64_t outer = x.shape()[0], mid = prod(x.shape(), 1, 1 + naxes), inner = prod(x.shape(), 1 + naxes, x.ndim());
        auto kind = pool_kind(op);
        auto xs = b.in("x"), y = b.out("y");
        return native::make_kernel(
            [=](const native::RunContext& c) { cpu::reduce_mid(c.at(xs), c.at(y), outer, mid, inner, kind); });
    });
}

}  // namespace graft::ops
