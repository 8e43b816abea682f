// Pool3D (max/avg over NDHWC); TF padding rules (valid, same), strides. (Conv3D: lib/ops/conv.)
#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

std::vector<std::int64_t> ints3(const Operator& op, const char* key) {
    auto v = op.attr<std::vector<std::int64_t>>(key);
    if (v.size() != 3) shape_fail(op, std::string(key) + " needs 3 entries, has " + std::to_string(v.size()));
    return v;
}

cpu::Pool pool_kind(const Operator& op) {
    auto k = op.attr<std::string>("kind");
    if (k == "max") return cpu::Pool::max;
    if (k == "avg") return cpu::Pool::avg;
    throw UnsupportedError(op.describe() + ": pooling kind '" + k + "' (expected max or avg)");
}

cpu::Pool3DParams pool3d_geometry(const Operator& op) {
    const Variable& x = in(op, "x");
    expect_axes(op, x, OrderNDHWC, "input");
    const auto k = ints3(op, "pool_size"), s = ints3(op, "strides");
    const auto padding = op.attr<std::string>("padding");
    if (padding == "causal") shape_fail(op, "causal padding is not a pooling padding");
    pool_kind(op);
    cpu::Pool3DParams p{};
    p.n = x.size(Axis::N), p.d = x.size(Axis::D), p.h = x.size(Axis::H), p.w = x.size(Axis::W), p.c = x.size(Axis::C);
    p.kd = k[0], p.kh = k[1], p.kw = k[2], p.stride_d = s[0], p.stride_h = s[1], p.stride_w = s[2];
    const auto sd = conv_span(op, p.d, p.kd, p.stride_d, 1, padding);
    const auto sh = conv_span(op, p.h, p.kh, p.stride_h, 1, padding);
    const auto sw = conv_span(op, p.w, p.kw, p.stride_w, 1, padding);
    p.od = sd.out, p.pad_front = sd.pad_begin, p.oh = sh.out, p.pad_top = sh.pad_begin, p.ow = sw.out, p.pad_left = sw.pad_begin;
    return p;
}

}  // namespace

void register_conv3d(Registry& r) {
    OpSchema q;
    q.type = "Pool3D";
    q.inputs = {"x"};
    q.infer = [](const Operator& op) -> Outputs {
        auto g = pool3d_geometry(op);
        return {{"y", {OrderNDHWC, {g.n, g.od, g.oh, g.ow, g.c}}}};
    };
    q.required_order = [](const Operator&, const std::string&) { return std::optional<Order>(OrderNDHWC); };
    q.doc = "3-D max/avg pooling over NDHWC; attrs kind, pool_size[3], strides[3], padding valid|same";
    r.add_op(std::move(q));
    r.add_generator<native::Backend>("Pool3D", [](native::BuildContext& b) {
        auto g = pool3d_geometry(b.op());
        auto kind = pool_kind(b.op());
        auto x = b.in("x"), y = b.out("y");
        return native::make_kernel([=](const native::RunContext& c) { cpu::pool3d_ndhwc(c.at(x), c.at(y), g, kind); });
    });
}

}  // namespace graft::ops
