// ConvLSTM2D, the recurrent family's convolutional LSTM (Keras ConvLSTM1D/2D, 1-D as H = 1):
//   x NTHWC [n, t, h, w, c_in]
//   w HWCN [kh, kw, c_in, 4 f], r HWCN [kh, kw, f, 4 f] (gates i, f, c, o), b C [4 f] optional
//   attrs strides[2], dilations[2], padding valid|same (the input convolution, TF's rules; the
//   recurrent one is stride 1, same), activation (tanh), recurrent_activation (sigmoid),
//   return_sequences, return_state, go_backwards
// Outputs y (NTHWC [n, t, oh, ow, f] with return_sequences, else NHWC) and, with return_state, the
// final h and c (NHWC). Kernel: graft_rt/conv_lstm.hpp on both backends.
#include <string>

#include "graft_rt/conv_lstm.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

using i64 = std::int64_t;

const Order kOrderNTHWC{Axis::N, Axis::T, Axis::H, Axis::W, Axis::C};

/// The kernel's parameters for the op's inputs and attributes, checked (ShapeError,
/// UnsupportedError for an unknown activation or padding).
graft_rt::ConvLstmParams conv_lstm_params(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& w = in(op, "w");
    const Variable& r = in(op, "r");
    expect_axes(op, x, kOrderNTHWC, "input");
    const auto strides = op.attr<std::vector<i64>>("strides");
    const auto dilations = op.attr<std::vector<i64>>("dilations");
    if (strides.size() != 2 || dilations.size() != 2) shape_fail(op, "strides and dilations need 2 entries");
    const std::string padding = op.attr<std::string>("padding");
    if (padding != "valid" && padding != "same")
        throw UnsupportedError(op.describe() + ": padding '" + padding + "' (expected valid or same)");
    graft_rt::ConvLstmParams p{};
    p.n = x.size(Axis::N), p.t = x.size(Axis::T), p.h = x.size(Axis::H), p.w = x.size(Axis::W), p.cin = x.size(Axis::C);
    if (p.t < 1 && p.t != kDynamic) shape_fail(op, "needs at least one timestep");
    if (w.order() != OrderHWCN || r.order() != OrderHWCN) shape_fail(op, "kernels " + w.describe() + ", " + r.describe() + " should be HWCN");
    p.kh = w.shape()[0], p.kw = w.shape()[1];
    const i64 g = w.shape()[3];
    if (g % 4 != 0 || g < 4) shape_fail(op, "kernel " + w.describe() + " should have 4 gates of filters on its last axis");
    p.filters = g / 4;
    if (w.shape()[2] != p.cin)
        shape_fail(op, "kernel " + w.describe() + " expects " + std::to_string(w.shape()[2]) + " input channels, the input has " +
                           std::to_string(p.cin));
    if (r.shape() != Shape{p.kh, p.kw, p.filters, g})
        shape_fail(op, "recurrent kernel " + r.describe() + " should be HWCN " + shape_str({p.kh, p.kw, p.filters, g}));
    if (const Variable* b = op.input_or_null("b"); b && (b->order() != OrderC || b->shape()[0] != g))
        shape_fail(op, "bias " + b->describe() + " should be C [" + std::to_string(g) + "]");
    const Span sh = conv_span(op, p.h, p.kh, strides[0], dilations[0], padding);
    const Span sw = conv_span(op, p.w, p.kw, strides[1], dilations[1], padding);
    p.stride_h = strides[0], p.stride_w = strides[1], p.dil_h = dilations[0], p.dil_w = dilations[1];
    p.pad_top = sh.pad_begin, p.pad_left = sw.pad_begin, p.oh = sh.out, p.ow = sw.out;
    p.return_sequences = op.attr_or<bool>("return_sequences", false);
    p.go_backwards = op.attr_or<bool>("go_backwards", false);
    p.act = act_params(op, op.attr_or<std::string>("activation", "tanh"));
    p.rec_act = act_params(op, op.attr_or<std::string>("recurrent_activation", "sigmoid"));
    return p;
}

Outputs infer_conv_lstm(const Operator& op) {
    const graft_rt::ConvLstmParams p = conv_lstm_params(op);
    const TensorType state{OrderNHWC, {p.n, p.oh, p.ow, p.filters}};
    Outputs out;
    if (p.return_sequences)
        out.push_back({"y", {kOrderNTHWC, {p.n, p.t, p.oh, p.ow, p.filters}}});
    else
        out.push_back({"y", state});
    if (op.attr_or<bool>("return_state", false)) {
        out.push_back({"h", state});
        out.push_back({"c", state});
    }
    return out;
}

std::unique_ptr<native::Kernel> build_conv_lstm(native::BuildContext& b) {
    const Operator& op = b.op();
    const graft_rt::ConvLstmParams p = conv_lstm_params(op);
    auto x = b.in("x"), w = b.in("w"), r = b.in("r"), y = b.out("y");
    const auto bias = optional_in(b, "b");
    std::optional<native::Slot> h, c;
    if (op.output_or_null("h")) h = b.out("h");
    if (op.output_or_null("c")) c = b.out("c");
    const auto work = b.workspace(static_cast<std::size_t>(graft_rt::conv_lstm_workspace(p)));
    return native::make_kernel([=](const native::RunContext& ctx) {
        graft_rt::conv_lstm2d(ctx.at(x), ctx.at(w), ctx.at(r), at_or_null(ctx, bias), ctx.at(y), at_or_null(ctx, h),
                              at_or_null(ctx, c), p, ctx.at(work));
    });
}

void emit_conv_lstm(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const graft_rt::ConvLstmParams p = conv_lstm_params(op);
    cpp::use(ctx, "conv_lstm");
    const std::string act = cpp::act_literal(ctx, p.act), rec = cpp::act_literal(ctx, p.rec_act);
    const std::string work = ctx.scratch(static_cast<std::size_t>(graft_rt::conv_lstm_workspace(p)));
    cpp::emit_struct(ctx, "ConvLstmParams", "p",
                     {{"n, t, h, w, cin", cpp::csv({p.n, p.t, p.h, p.w, p.cin})},
                      {"kh, kw, filters", cpp::csv({p.kh, p.kw, p.filters})},
                      {"stride_h, stride_w, dil_h, dil_w, pad_top, pad_left",
                       cpp::csv({p.stride_h, p.stride_w, p.dil_h, p.dil_w, p.pad_top, p.pad_left})},
                      {"oh, ow", cpp::csv({p.oh, p.ow})},
                      {"return_sequences", cpp::lit(p.return_sequences)},
                      {"go_backwards", cpp::lit(p.go_backwards)},
                      {"activation", act},
                      {"recurrent_activation", rec}});
    auto out = [&](const char* n) { return op.output_or_null(n) ? ctx.output(n) : std::string("nullptr"); };
    ctx.line("graft_rt::conv_lstm2d({}, {}, {}, {}, {}, {}, {}, p, {});", ctx.input("x"), ctx.input("w"), ctx.input("r"),
             cpp::input_or_null(ctx, "b"), ctx.output("y"), out("h"), out("c"), work);
}

}  // namespace

void register_conv_lstm(Registry& r) {
    OpDef(kConvLSTM2D, {"x", "w", "r", "b?"}, infer_conv_lstm,
          "convolutional LSTM over x NTHWC, w HWCN [kh, kw, c_in, 4f], r HWCN [kh, kw, f, 4f] (gates i, f, c, o), b C "
          "[4f]; attrs strides[2], dilations[2], padding valid|same (input convolution; the recurrent one is same, "
          "stride 1), activation, recurrent_activation, return_sequences, return_state, go_backwards")
        .required_order([](const Operator&, const std::string& input) -> std::optional<Order> {
            if (input == "x") return kOrderNTHWC;
            if (input == "b") return OrderC;
            return OrderHWCN;
        })
        .add(r, build_conv_lstm, emit_conv_lstm);
}

}  // namespace graft::ops
