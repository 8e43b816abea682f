// Conv3D (x NDHWC, w DHWCN = Keras (kd, kh, kw, c_in, c_out)); TF padding rules (valid, same),
// strides, dilation, fused activation.
#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

const Order kOrderDHWCN{Axis::D, Axis::H, Axis::W, Axis::C, Axis::N};

std::vector<std::int64_t> ints3(const Operator& op, const char* key) {
    auto v = op.attr<std::vector<std::int64_t>>(key);
    if (v.size() != 3) shape_fail(op, std::string(key) + " needs 3 entries, has " + std::to_string(v.size()));
    return v;
}

cpu::Conv3DParams conv3d_geometry(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& w = in(op, "w");
    expect_axes(op, x, OrderNDHWC, "input");
    if (w.order() != kOrderDHWCN) shape_fail(op, "kernel " + w.describe() + " should be in order DHWCN");
    const auto s = ints3(op, "strides"), d = ints3(op, "dilations");
    const auto padding = op.attr<std::string>("padding");
    if (padding == "causal") shape_fail(op, "causal padding exists only for 1-D convolutions");
    cpu::Conv3DParams p{};
    p.n = x.size(Axis::N), p.d = x.size(Axis::D), p.h = x.size(Axis::H), p.w = x.size(Axis::W), p.cin = x.size(Axis::C);
    p.kd = w.shape()[0], p.kh = w.shape()[1], p.kw = w.shape()[2], p.cout = w.shape()[4];
    if (w.shape()[3] != p.cin)
        shape_fail(op, "kernel " + w.describe() + " expects " + std::to_string(w.shape()[3]) + " input channels, the input has " +
                           std::to_string(p.cin));
    p.stride_d = s[0], p.stride_h = s[1], p.stride_w = s[2], p.dil_d = d[0], p.dil_h = d[1], p.dil_w = d[2];
    const auto sd = conv_span(op, p.d, p.kd, p.stride_d, p.dil_d, padding);
    const auto sh = conv_span(op, p.h, p.kh, p.stride_h, p.dil_h, padding);
    const auto sw = conv_span(op, p.w, p.kw, p.stride_w, p.dil_w, padding);
    p.od = sd.out, p.pad_front = sd.pad_begin, p.oh = sh.out, p.pad_top = sh.pad_begin, p.ow = sw.out, p.pad_left = sw.pad_begin;
    if (auto* b = op.input_or_null("b"); b && (b->order() != OrderC || b->shape()[0] != p.cout))
        shape_fail(op, "bias " + b->describe() + " should be C [" + std::to_string(p.cout) + "]");
    return p;
}

}  // namespace

void register_conv3d(Registry& r) {
    OpSchema s;
    s.type = "Conv3D";
    s.inputs = {"x", "w", "b?"};
    s.infer = [](const Operator& op) -> Outputs {
        auto p = conv3d_geometry(op);
        if (op.attrs().has("activation")) act_params(op, op.attr<std::string>("activation"));
        return {{"y", {OrderNDHWC, {p.n, p.od, p.oh, p.ow, p.cout}}}};
    };
    s.required_order = [](const Operator&, const std::string& i) -> std::optional<Order> {
        if (i == "x") return OrderNDHWC;
        if (i == "w") return kOrderDHWCN;
        return OrderC;
    };
    s.doc = "3-D convolution, x NDHWC, w DHWCN [kd, kh, kw, c_in, c_out]; attrs strides[3], dilations[3], padding valid|same";
    r.add_op(std::move(s));
    r.add_generator<native::Backend>("Conv3D", [](native::BuildContext& b) {
        const Operator& op = b.op();
        auto p = conv3d_geometry(op);
        auto act = act_params(op, op.attr_or<std::string>("activation", "linear"));
        auto x = b.in("x"), w = b.in("w"), y = b.out("y");
        std::optional<native::Slot> bias;
        if (op.has_input("b")) bias = b.in("b");
        return native::make_kernel([=](const native::RunContext& c) {
            cpu::conv3d_ndhwc(c.at(x), c.at(w), bias ? c.at(*bias) : nullptr, c.at(y), p, act);
        });
    });
}

}  // namespace graft::ops
