// LocallyConnected2D, the convolution family's unshared-weight member (Keras LocallyConnected1D
// and 2D, every `implementation`, brought to one layout by the converter):
//   x NHWC [n, h, w, c_in]
//   w [oh, ow, kh, kw, c_in, c_out] (axes OH, OW, H, W, C, N): the kernel of each output position
//   b [oh, ow, c_out] (axes OH, OW, C), optional
//   attrs strides[2], pads[2] (zeros before the input along H and W: the window of output (i, j)
//   starts at input (i * stride_h - pads[0], j * stride_w - pads[1]); taps outside read zero).
// y NHWC [n, oh, ow, c_out]: the output size is the kernel's OH, OW. Kernel: graft_rt/local.hpp on
// both backends.
#include <string>

#include "graft_rt/local.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

using i64 = std::int64_t;

const Axis kOH{"OH"}, kOW{"OW"};
const Order kOrderLocalW{kOH, kOW, Axis::H, Axis::W, Axis::C, Axis::N};
const Order kOrderLocalB{kOH, kOW, Axis::C};

/// The geometry of x, w and b, checked against each other and the attributes (ShapeError).
graft_rt::LocalConvParams local_params(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& w = in(op, "w");
    expect_axes(op, x, OrderNHWC, "input");
    if (w.order() != kOrderLocalW) shape_fail(op, "kernel " + w.describe() + " should be in order " + kOrderLocalW.str());
    const auto strides = op.attr<std::vector<i64>>("strides");
    const auto pads = op.attr<std::vector<i64>>("pads");
    if (strides.size() != 2 || pads.size() != 2) shape_fail(op, "strides and pads need 2 entries");
    const std::string where = op.describe();
    const Shape& ws = w.shape();
    graft_rt::LocalConvParams p{};
    p.n = x.size(Axis::N);
    p.h = x.size(Axis::H), p.w = x.size(Axis::W), p.cin = x.size(Axis::C);
    p.oh = ws[0], p.ow = ws[1], p.kh = ws[2], p.kw = ws[3], p.cout = ws[5];
    if (p.h == kDynamic || p.w == kDynamic) shape_fail(op, "input " + x.describe() + " needs static H and W");
    if (ws[4] != p.cin)
        shape_fail(op, "kernel " + w.describe() + " expects " + std::to_string(ws[4]) + " input channels, the input has " +
                           std::to_string(p.cin));
    p.stride_h = checked::in_range(where, "stride", strides[0]);
    p.stride_w = checked::in_range(where, "stride", strides[1]);
    const i64 size[2] = {p.h, p.w}, k[2] = {p.kh, p.kw}, s[2] = {p.stride_h, p.stride_w}, out[2] = {p.oh, p.ow};
    for (int a = 0; a < 2; ++a) {
        checked::in_range(where, "kernel size", k[a]);
        checked::in_range(where, "output size", out[a]);
        const i64 pad = checked::in_range(where, "pad", pads[static_cast<std::size_t>(a)], 0, k[a] - 1);
        // every window starts before the input's end (sizes <= kMaxElements: no overflow)
        if ((out[a] - 1) * s[a] - pad >= size[a])
            shape_fail(op, "kernel " + w.describe() + " has more output positions than the input of " + x.describe() +
                               " gives with stride " + std::to_string(s[a]));
    }
    p.pad_top = pads[0], p.pad_left = pads[1];
    if (const Variable* b = op.input_or_null("b");
        b && (b->order() != kOrderLocalB || b->shape() != Shape{p.oh, p.ow, p.cout}))
        shape_fail(op, "bias " + b->describe() + " should be " + kOrderLocalB.str() + " [" +
                           std::to_string(p.oh) + ", " + std::to_string(p.ow) + ", " + std::to_string(p.cout) + "]");
    return p;
}

Outputs infer_local(const Operator& op) {
    const graft_rt::LocalConvParams p = local_params(op);
    return {{"y", TensorType{OrderNHWC, {p.n, p.oh, p.ow, p.cout}}}};
}

std::unique_ptr<native::Kernel> build_local(native::BuildContext& b) {
    const graft_rt::LocalConvParams p = local_params(b.op());
    auto x = b.in("x"), w = b.in("w"), y = b.out("y");
    const auto bias = optional_in(b, "b");
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::local_conv2d_nhwc(c.at(x), c.at(w), at_or_null(c, bias), c.at(y), p);
    });
}

void emit_local(cpp::EmitContext& ctx) {
    const graft_rt::LocalConvParams p = local_params(ctx.op());
    cpp::use(ctx, "local");
    cpp::emit_struct(ctx, "LocalConvParams", "p",
                     {{"n, h, w, cin", cpp::csv({p.n, p.h, p.w, p.cin})},
                      {"kh, kw, cout", cpp::csv({p.kh, p.kw, p.cout})},
                      {"stride_h, stride_w", cpp::csv({p.stride_h, p.stride_w})},
                      {"pad_top, pad_left", cpp::csv({p.pad_top, p.pad_left})},
                      {"oh, ow", cpp::csv({p.oh, p.ow})}});
    ctx.line("graft_rt::local_conv2d_nhwc({}, {}, {}, {}, p);", ctx.input("x"), ctx.input("w"),
             cpp::input_or_null(ctx, "b"), ctx.output("y"));
}

}  // namespace

void register_local_conv(Registry& r) {
    OpDef(kLocallyConnected2D, {"x", "w", "b?"}, infer_local,
          "locally connected 2-D layer (a kernel per output position), x NHWC, w [oh, ow, kh, kw, c_in, c_out] (OH, OW, "
          "H, W, C, N), b [oh, ow, c_out] (OH, OW, C); attrs strides[2], pads[2] (leading zeros along H, W)")
        .required_order([](const Operator&, const std::string& input) -> std::optional<Order> {
            if (input == "x") return OrderNHWC;
            if (input == "w") return kOrderLocalW;
            return kOrderLocalB;
        })
        .add(r, build_local, emit_local);
}

}  // namespace graft::ops
