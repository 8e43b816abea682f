// Transposed convolutions: ConvTranspose2D (x NHWC, w HWNC = Keras (kh, kw, c_out, c_in)) and
// ConvTranspose3D (x NDHWC, w DHWNC). Output size and padding follow Keras' deconv_output_length
// and TF's conv2d_transpose: attrs strides, dilations, padding valid|same, output_padding
// (optional; none means Keras' default output size).
#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

const Order kOrderHWNC{Axis::H, Axis::W, Axis::N, Axis::C};
const Order kOrderDHWNC{Axis::D, Axis::H, Axis::W, Axis::N, Axis::C};

Span deconv_span(const Operator& op, std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t dil,
                 const std::string& padding, std::int64_t out_pad) {
    if (k < 1 || stride < 1 || dil < 1)
        shape_fail(op, "kernel " + std::to_string(k) + ", stride " + std::to_string(stride) + " and dilation " +
                           std::to_string(dil) + " must all be at least 1");
    if (padding != "valid" && padding != "same")
        throw UnsupportedError(op.describe() + ": padding '" + padding + "' (expected valid or same)");
    const std::int64_t span = (k - 1) * dil + 1;
    std::int64_t out;
    if (out_pad < 0) {
        out = padding == "valid" ? in * stride + std::max<std::int64_t>(span - stride, 0) : in * stride;
    } else {
        if (out_pad >= stride)
            shape_fail(op, "output_padding " + std::to_string(out_pad) + " must be smaller than the stride " + std::to_string(stride));
        const std::int64_t pad = padding == "same" ? span / 2 : 0;
        out = (in - 1) * stride + span - 2 * pad + out_pad;
    }
    if (out < 1) shape_fail(op, "output size " + std::to_string(out) + " from input size " + std::to_string(in));
    // TF: the forward convolution from `out` must give back `in`
    const std::int64_t back = padding == "same" ? (out + stride - 1) / stride : (out - span) / stride + 1;
    if (out < span && padding == "valid") shape_fail(op, "output size " + std::to_string(out) + " is smaller than the kernel's reach");
    if (back != in)
        shape_fail(op, "output size " + std::to_string(out) + " does not convolve back to input size " + std::to_string(in));
    const std::int64_t total = std::max<std::int64_t>((in - 1) * stride + span - out, 0);
    return {out, padding == "same" ? total / 2 : 0};
}

cpu::ConvTransposeParams geometry(const Operator& op, int nd) {
    const Variable& x = in(op, "x");
    const Variable& w = in(op, "w");
    const Order& xo = nd == 2 ? OrderNHWC : OrderNDHWC;
    const Order& wo = nd == 2 ? kOrderHWNC : kOrderDHWNC;
    expect_axes(op, x, xo, "input");
    if (w.order() != wo) shape_fail(op, "kernel " + w.describe() + " should be in order " + wo.str());
    const auto s = op.attr<std::vector<std::int64_t>>("strides"), d = op.attr<std::vector<std::int64_t>>("dilations");
    auto op_pad = op.attr_or<std::vector<std::int64_t>>("output_padding", {});
    const auto n = static_cast<std::size_t>(nd);
    if (s.size() != n || d.size() != n || (!op_pad.empty() && op_pad.size() != n))
        shape_fail(op, "strides, dilations and output_padding need " + std::to_string(nd) + " entries");
    if (op_pad.empty()) op_pad.assign(n, -1);
    const auto padding = op.attr<std::string>("padding");
    cpu::ConvTransposeParams p{};
    const std::size_t o = nd == 3 ? 1 : 0;  // offset of H in the spatial lists
    p.n = x.size(Axis::N), p.h = x.size(Axis::H), p.w = x.size(Axis::W), p.cin = x.size(Axis::C);
    p.d = nd == 3 ? x.size(Axis::D) : 1;
    p.kd = nd == 3 ? w.shape()[0] : 1, p.kh = w.shape()[o], p.kw = w.shape()[o + 1], p.cout = w.shape()[o + 2];
    if (w.shape()[o + 3] != p.cin)
        shape_fail(op, "kernel " + w.describe() + " expects " + std::to_string(w.shape()[o + 3]) + " input channels, the input has " +
                           std::to_string(p.cin));
    p.stride_d = nd == 3 ? s[0] : 1, p.dil_d = nd == 3 ? d[0] : 1;
    p.stride_h = s[o], p.stride_w = s[o + 1], p.dil_h = d[o], p.dil_w = d[o + 1];
    Span sd{1, 0};
    if (nd == 3) sd = deconv_span(op, p.d, p.kd, p.stride_d, p.dil_d, padding, op_pad[0]);
    const auto sh = deconv_span(op, p.h, p.kh, p.stride_h, p.dil_h, padding, op_pad[o]);
    const auto sw = deconv_span(op, p.w, p.kw, p.stride_w, p.dil_w, padding, op_pad[o + 1]);
    p.od = sd.out, p.pad_front = sd.pad_begin, p.oh = sh.out, p.pad_top = sh.pad_begin, p.ow = sw.out, p.pad_left = sw.pad_begin;
    if (auto* b = op.input_or_null("b"); b && (b->order() != OrderC || b->shape()[0] != p.cout))
        shape_fail(op, "bias " + b->describe() + " should be C [" + std::to_string(p.cout) + "]");
    return p;
}

void add(Registry& r, const char* type, int nd, const char* doc) {
    OpSchema s;
    s.type = type;
    s.inputs = {"x", "w", "b?"};
    s.infer = [nd](const Operator& op) -> Outputs {
        auto p = geometry(op, nd);
        if (op.attrs().has("activation")) act_params(op, op.attr<std::string>("activation"));
        if (nd == 2) return {{"y", {OrderNHWC, {p.n, p.oh, p.ow, p.cout}}}};
        return {{"y", {OrderNDHWC, {p.n, p.od, p.oh, p.ow, p.cout}}}};
    };
    s.required_order = [nd](const Operator&, const std::string& i) -> std::optional<Order> {
        if (i == "x") return nd == 2 ? OrderNHWC : OrderNDHWC;
        if (i == "w") return nd == 2 ? kOrderHWNC : kOrderDHWNC;
        return OrderC;
    };
    s.doc = doc;
    r.add_op(std::move(s));
    r.add_generator<native::Backend>(type, [nd](native::BuildContext& b) {
        const Operator& op = b.op();
        auto p = geometry(op, nd);
        auto act = act_params(op, op.attr_or<std::string>("activation", "linear"));
        auto x = b.in("x"), w = b.in("w"), y = b.out("y");
        std::optional<native::Slot> bias;
        if (op.has_input("b")) bias = b.in("b");
        return native::make_kernel([=](const native::RunContext& c) {
            cpu::conv_transpose3d_ndhwc(c.at(x), c.at(w), bias ? c.at(*bias) : nullptr, c.at(y), p, act);
        });
    });
}

}  // namespace

void register_conv_transpose(Registry& r) {
    add(r, "ConvTranspose2D", 2,
        "transposed 2-D convolution, x NHWC, w HWNC [kh, kw, c_out, c_in]; attrs strides[2], dilations[2], padding valid|same, "
        "output_padding[2] (optional)");
    add(r, "ConvTranspose3D", 3,
        "transposed 3-D convolution, x NDHWC, w DHWNC [kd, kh, kw, c_out, c_in]; attrs strides[3], dilations[3], padding "
        "valid|same, output_padding[3] (optional)");
}

}  // namespace graft::ops
