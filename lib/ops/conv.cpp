// Convolutions: Conv1D (x NTC, w TCN) and Conv2D (x NHWC, w HWCN), Keras kernel layouts,
// TF padding rules (valid, same, and causal for 1-D), strides, dilation, fused activation, and an
// optional residual input r (same shape as y) added before the activation (optimize::fuse_residual).
#include "cpu/gemm/conv_kernel.hpp"
#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

const Order kOrderTCN{Axis::T, Axis::C, Axis::N};

/// Geometry of a convolution; 1-D is 2-D with height 1.
cpu::Conv2DParams conv_geometry(const Operator& op, bool one_d) {
    const Variable& x = in(op, "x");
    const Variable& w = in(op, "w");
    cpu::Conv2DParams p{};
    const auto strides = op.attr<std::vector<std::int64_t>>("strides");
    const auto dil = op.attr<std::vector<std::int64_t>>("dilations");
    const auto padding = op.attr<std::string>("padding");
    const std::size_t nd = one_d ? 1 : 2;
    if (strides.size() != nd || dil.size() != nd) shape_fail(op, "strides and dilations need " + std::to_string(nd) + " entries");
    if (one_d) {
        expect_axes(op, x, OrderNTC, "input");
        if (w.order() != kOrderTCN) shape_fail(op, "kernel " + w.describe() + " should be in order TCN");
        p.n = x.size(Axis::N), p.h = 1, p.w = x.size(Axis::T), p.cin = x.size(Axis::C);
        p.kh = 1, p.kw = w.shape()[0], p.cout = w.shape()[2];
        p.stride_h = 1, p.stride_w = strides[0], p.dil_h = 1, p.dil_w = dil[0];
        if (w.shape()[1] != p.cin) shape_fail(op, "kernel " + w.describe() + " expects " + std::to_string(w.shape()[1]) + " input channels, the input has " + std::to_string(p.cin));
        auto sw = conv_span(op, p.w, p.kw, p.stride_w, p.dil_w, padding);
        p.oh = 1, p.pad_top = 0, p.ow = sw.out, p.pad_left = sw.pad_begin;
    } else {
        expect_axes(op, x, OrderNHWC, "input");
        if (w.order() != OrderHWCN) shape_fail(op, "kernel " + w.describe() + " should be in order HWCN");
        if (padding == "causal") shape_fail(op, "causal padding exists only for 1-D convolutions");
        p.n = x.size(Axis::N), p.h = x.size(Axis::H), p.w = x.size(Axis::W), p.cin = x.size(Axis::C);
        p.kh = w.shape()[0], p.kw = w.shape()[1], p.cout = w.shape()[3];
        p.stride_h = strides[0], p.stride_w = strides[1], p.dil_h = dil[0], p.dil_w = dil[1];
        if (w.shape()[2] != p.cin) shape_fail(op, "kernel " + w.describe() + " expects " + std::to_string(w.shape()[2]) + " input channels, the input has " + std::to_string(p.cin));
        auto sh = conv_span(op, p.h, p.kh, p.stride_h, p.dil_h, padding);
        auto sw = conv_span(op, p.w, p.kw, p.stride_w, p.dil_w, padding);
        p.oh = sh.out, p.pad_top = sh.pad_begin, p.ow = sw.out, p.pad_left = sw.pad_begin;
    }
    if (auto* b = op.input_or_null("b"); b && (b->order() != OrderC || b->shape()[0] != p.cout))
        shape_fail(op, "bias " + b->describe() + " should be C [" + std::to_string(p.cout) + "]");
    return p;
}

Outputs infer_conv(const Operator& op, bool one_d) {
    auto p = conv_geometry(op, one_d);
    if (op.attrs().has("activation")) act_params(op, op.attr<std::string>("activation"));
    Outputs out;
    if (one_d)
        out = {{"y", {OrderNTC, {p.n, p.ow, p.cout}}}};
    else
        out = {{"y", {OrderNHWC, {p.n, p.oh, p.ow, p.cout}}}};
    if (const Variable* r = op.input_or_null("r")) {
        const TensorType& t = out.front().second;
        if (r->order() != t.order || r->shape() != t.shape)
            shape_fail(op, "residual " + r->describe() + " should have the output's order and shape");
    }
    return out;
}

std::optional<Order> order_conv(const std::string& input, bool one_d) {
    if (input == "x") return one_d ? OrderNTC : OrderNHWC;
    if (input == "w") return one_d ? kOrderTCN : OrderHWCN;
    if (input == "r") return one_d ? OrderNTC : OrderNHWC;
    return OrderC;
}

std::unique_ptr<native::Kernel> build_conv(native::BuildContext& b, bool one_d) {
    const Operator& op = b.op();
    auto p = conv_geometry(op, one_d);
    auto act = act_params(op, op.attr_or<std::string>("activation", "linear"));
    auto x = b.in("x"), w = b.in("w"), y = b.out("y");
    std::optional<native::Slot> bias;
    if (op.has_input("b")) bias = b.in("b");
    std::optional<native::Slot> res;
    if (op.has_input("r")) res = b.in("r");
    const Variable& wv = *op.input("w");
    if (wv.is_constant())
        return cpu::gemm::make_conv2d_kernel(b, p, static_cast<const ConstantVariable&>(wv).data(), x, bias, res, y, act);
    const std::size_t count = static_cast<std::size_t>(p.n * p.oh * p.ow * p.cout);
    return native::make_kernel([=](const native::RunContext& c) {
        if (!res) return cpu::conv2d_nhwc(c.at(x), c.at(w), bias ? c.at(*bias) : nullptr, c.at(y), p, act);
        float* out = c.at(y);
        const float* r = c.at(*res);
        cpu::conv2d_nhwc(c.at(x), c.at(w), bias ? c.at(*bias) : nullptr, out, p, cpu::ActParams{});
        for (std::size_t i = 0; i < count; ++i) out[i] += r[i];
        cpu::activate(out, out, static_cast<std::int64_t>(count), act);
    });
}

void add_conv(Registry& r, const char* type, bool one_d, const char* doc) {
    OpSchema s;
    s.type = type;
    s.inputs = {"x", "w", "b?", "r?"};
    s.infer = [one_d](const Operator& op) { return infer_conv(op, one_d); };
    s.required_order = [one_d](const Operator&, const std::string& i) { return order_conv(i, one_d); };
    s.activation_epilogue = true;
    s.doc = doc;
    r.add_op(std::move(s));
    r.add_generator<native::Backend>(type, [one_d](native::BuildContext& b) { return build_conv(b, one_d); });
}

}  // namespace

void register_conv(Registry& r) {
    add_conv(r, "Conv1D", true,
             "1-D convolution, x NTC, w TCN [k, c_in, c_out]; attrs strides[1], dilations[1], padding valid|same|causal");
    add_conv(r, "Conv2D", false,
             "2-D convolution, x NHWC, w HWCN [kh, kw, c_in, c_out]; attrs strides[2], dilations[2], padding valid|same");
}

}  // namespace graft::ops
