// DepthwiseConv2D: x NHWC, w [kh, kw, c_in, depth_multiplier] (Keras layout, order HWC[M]),
// bias [c_in * M]; output channel c * M + m. TF padding rules, strides, dilation, activation.
#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

const Axis kMult{"M"};
const Order kOrderHWCM{Axis::H, Axis::W, Axis::C, kMult};

cpu::DepthwiseParams dw_geometry(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& w = in(op, "w");
    expect_axes(op, x, OrderNHWC, "input");
    if (w.order() != kOrderHWCM) shape_fail(op, "kernel " + w.describe() + " should be in order HWC[M]");
    const auto s = op.attr<std::vector<std::int64_t>>("strides"), d = op.attr<std::vector<std::int64_t>>("dilations");
    if (s.size() != 2 || d.size() != 2) shape_fail(op, "strides and dilations need 2 entries");
    const auto padding = op.attr<std::string>("padding");
    if (padding == "causal") shape_fail(op, "causal padding exists only for 1-D convolutions");
    cpu::DepthwiseParams p{};
    p.n = x.size(Axis::N), p.h = x.size(Axis::H), p.w = x.size(Axis::W), p.cin = x.size(Axis::C);
    p.kh = w.shape()[0], p.kw = w.shape()[1], p.mult = w.shape()[3];
    if (w.shape()[2] != p.cin)
        shape_fail(op, "kernel " + w.describe() + " expects " + std::to_string(w.shape()[2]) + " input channels, the input has " +
                           std::to_string(p.cin));
    p.stride_h = s[0], p.stride_w = s[1], p.dil_h = d[0], p.dil_w = d[1];
    const auto sh = conv_span(op, p.h, p.kh, p.stride_h, p.dil_h, padding);
    const auto sw = conv_span(op, p.w, p.kw, p.stride_w, p.dil_w, padding);
    p.oh = sh.out, p.pad_top = sh.pad_begin, p.ow = sw.out, p.pad_left = sw.pad_begin;
    if (auto* b = op.input_or_null("b"); b && (b->order() != OrderC || b->shape()[0] != p.cin * p.mult))
        shape_fail(op, "bias " + b->describe() + " should be C [" + std::to_string(p.cin * p.mult) + "]");
    return p;
}

}  // namespace

void register_depthwise(Registry& r) {
    OpSchema s;
    s.type = "DepthwiseConv2D";
    s.inputs = {"x", "w", "b?"};
    s.infer = [](const Operator& op) -> Outputs {
        auto p = dw_geometry(op);
        if (op.attrs().has("activation")) act_params(op, op.attr<std::string>("activation"));
        return {{"y", {OrderNHWC, {p.n, p.oh, p.ow, p.cin * p.mult}}}};
    };
    s.required_order = [](const Operator&, const std::string& i) -> std::optional<Order> {
        if (i == "x") return OrderNHWC;
        if (i == "w") return kOrderHWCM;
        return OrderC;
    };
    s.doc = "depthwise 2-D convolution, x NHWC, w HWC[M] [kh, kw, c_in, multiplier], output channel c*M+m; attrs strides[2], "
            "dilations[2], padding valid|same";
    r.add_op(std::move(s));
    r.add_generator<native::Backend>("DepthwiseConv2D", [](native::BuildContext& b) {
        const Operator& op = b.op();
        auto p = dw_geometry(op);
        auto act = act_params(op, op.attr_or<std::string>("activation", "linear"));
        auto x = b.in("x"), w = b.in("w"), y = b.out("y");
        std::optional<native::Slot> bias;
        if (op.has_input("b")) bias = b.in("b");
        return native::make_kernel([=](const native::RunContext& c) {
            cpu::depthwise2d_nhwc(c.at(x), c.at(w), bias ? c.at(*bias) : nullptr, c.at(y), p, act);
        });
    });
}

}  // namespace graft::ops
