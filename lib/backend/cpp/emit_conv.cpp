// C++ emitters: Conv1D / Conv2D / Conv3D (implicit GEMM on packed weights), DepthwiseConv2D and
// ConvTranspose2D / 3D. Geometry from the shapes and TF padding rules (ops::conv_span).
#include <algorithm>

#include "ops/emit_util.hpp"
#include "ops/legacy_families.hpp"

namespace graft::cpp {

namespace {

using i64 = std::int64_t;

constexpr i64 kIm2colMaxFloats = 1 << 20;  // 4 MB

std::vector<i64> ints(const Operator& op, const char* key) { return op.attr<std::vector<i64>>(key); }

void emit_conv(EmitContext& ctx, bool one_d) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const Variable& w = *op.input("w");
    const Variable& y = *op.output("y");
    const auto s = ints(op, "strides"), d = ints(op, "dilations");
    const auto padding = op.attr<std::string>("padding");
    i64 h = 1, kh = 1, sh = 1, dh = 1, oh = 1, pad_top = 0;
    i64 wd, kw, sw, dw, ow;
    const i64 n = x.size(Axis::N), cin = x.size(Axis::C), cout = y.size(Axis::C);
    if (one_d) {
        wd = x.size(Axis::T), kw = w.shape()[0], sw = s.at(0), dw = d.at(0), ow = y.size(Axis::T);
    } else {
        h = x.size(Axis::H), wd = x.size(Axis::W), kh = w.shape()[0], kw = w.shape()[1];
        sh = s.at(0), sw = s.at(1), dh = d.at(0), dw = d.at(1), oh = y.size(Axis::H), ow = y.size(Axis::W);
        pad_top = ops::conv_span(op, h, kh, sh, dh, padding).pad_begin;
    }
    const i64 pad_left = ops::conv_span(op, wd, kw, sw, dw, padding).pad_begin;
    const i64 K = kh * kw * cin;
    use(ctx, "conv2d");
    const std::string wp = packed_weight(ctx, "w", K, cout);
    // With a residual input the activation comes after the add, so the product runs linear.
    const bool residual = op.has_input("r");
    const std::string act = act_expr(ctx, residual ? "linear" : fused_act(op));
    const bool pointwise = kh == 1 && kw == 1 && sh == 1 && sw == 1 && pad_top == 0 && pad_left == 0 && oh == h && ow == wd;
    // im2col of enough output rows for tall products (>= 48 rows of A), within 4 MB of scratch;
    // the native kernels group taps into k blocks the same way.
    i64 block_rows = 0;
    if (!pointwise && ow * K <= kIm2colMaxFloats)
        block_rows = std::min<i64>(std::min<i64>(oh, (48 + ow - 1) / ow), std::max<i64>(1, kIm2colMaxFloats / (ow * K)));
    const std::string work = block_rows ? ctx.scratch(static_cast<std::size_t>(block_rows * ow * K)) : "nullptr";
    emit_struct(ctx, "Conv2D", "p",
                {{"n, h, w, cin", csv({n, h, wd, cin})},
                 {one_d ? "kh, kw (taps), cout" : "kh, kw, cout", csv({kh, kw, cout})},
                 {"stride_h, stride_w, dil_h, dil_w", csv({sh, sw, dh, dw})},
                 {"pad_top, pad_left (" + padding + ")", csv({pad_top, pad_left})},
                 {"oh, ow", csv({oh, ow})},
                 {"block_rows: output rows per product (im2col in work)", csv({block_rows})}});
    ctx.line("graft_rt::conv2d_nhwc({}, {}, {}, {}, p, {}, {});", ctx.input("x"), wp, input_or_null(ctx, "b"), ctx.output("y"),
             act, work);
    if (!residual) return;
    use(ctx, "elementwise");
    ctx.constant_i64("n_out", y.numel(), "output elements");
    ctx.comment("residual r (fused Add), then the activation");
    ctx.line("graft_rt::merge2(graft_rt::MergeOp::add, {}, {}, {}, n_out);", ctx.output("y"), ctx.input("r"), ctx.output("y"));
    ctx.line("graft_rt::activation({}, {}, n_out, {});", ctx.output("y"), ctx.output("y"), act_expr(ctx, fused_act(op)));
}

void emit_conv3d(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const Variable& w = *op.input("w");
    const Variable& y = *op.output("y");
    const auto s = ints(op, "strides"), d = ints(op, "dilations");
    const auto padding = op.attr<std::string>("padding");
    const i64 n = x.size(Axis::N), D = x.size(Axis::D), H = x.size(Axis::H), W = x.size(Axis::W), cin = x.size(Axis::C);
    const i64 kd = w.shape()[0], kh = w.shape()[1], kw = w.shape()[2], cout = y.size(Axis::C);
    const i64 pf = ops::conv_span(op, D, kd, s.at(0), d.at(0), padding).pad_begin;
    const i64 pt = ops::conv_span(op, H, kh, s.at(1), d.at(1), padding).pad_begin;
    const i64 pl = ops::conv_span(op, W, kw, s.at(2), d.at(2), padding).pad_begin;
    use(ctx, "conv3d");
    const std::string wp = packed_weight(ctx, "w", kd * kh * kw * cin, cout);
    const std::string act = act_expr(ctx, fused_act(op));
    emit_struct(ctx, "Conv3D", "p",
                {{"n, d, h, w, cin", csv({n, D, H, W, cin})},
                 {"kd, kh, kw, cout", csv({kd, kh, kw, cout})},
                 {"stride_d, stride_h, stride_w, dil_d, dil_h, dil_w", csv({s.at(0), s.at(1), s.at(2), d.at(0), d.at(1), d.at(2)})},
                 {"pad_front, pad_top, pad_left (" + padding + ")", csv({pf, pt, pl})},
                 {"od, oh, ow", csv({y.size(Axis::D), y.size(Axis::H), y.size(Axis::W)})}});
    ctx.line("graft_rt::conv3d_ndhwc({}, {}, {}, {}, p, {});", ctx.input("x"), wp, input_or_null(ctx, "b"), ctx.output("y"), act);
}

void emit_depthwise(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const Variable& w = *op.input("w");
    const Variable& y = *op.output("y");
    const auto s = ints(op, "strides"), d = ints(op, "dilations");
    const auto padding = op.attr<std::string>("padding");
    const i64 n = x.size(Axis::N), H = x.size(Axis::H), W = x.size(Axis::W), cin = x.size(Axis::C);
    const i64 kh = w.shape()[0], kw = w.shape()[1], mult = w.shape()[3];
    const i64 pt = ops::conv_span(op, H, kh, s.at(0), d.at(0), padding).pad_begin;
    const i64 pl = ops::conv_span(op, W, kw, s.at(1), d.at(1), padding).pad_begin;
    use(ctx, "depthwise2d");
    const std::string act = act_expr(ctx, fused_act(op));
    emit_struct(ctx, "Depthwise2D", "p",
                {{"n, h, w, cin, mult", csv({n, H, W, cin, mult})},
                 {"kh, kw", csv({kh, kw})},
                 {"stride_h, stride_w, dil_h, dil_w", csv({s.at(0), s.at(1), d.at(0), d.at(1)})},
                 {"pad_top, pad_left (" + padding + ")", csv({pt, pl})},
                 {"oh, ow", csv({y.size(Axis::H), y.size(Axis::W)})}});
    ctx.line("graft_rt::depthwise2d_nhwc({}, {}, {}, {}, p, {});", ctx.input("x"), ctx.input("w"), input_or_null(ctx, "b"),
             ctx.output("y"), act);
}

/// Leading pad of a transposed convolution (Keras deconv_output_length / TF conv2d_transpose).
i64 deconv_pad(i64 in, i64 out, i64 k, i64 stride, i64 dil, const std::string& padding) {
    if (padding != "same") return 0;
    const i64 span = (k - 1) * dil + 1;
    return std::max<i64>((in - 1) * stride + span - out, 0) / 2;
}

void emit_conv_transpose(EmitContext& ctx, int nd) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const Variable& w = *op.input("w");
    const Variable& y = *op.output("y");
    const auto s = ints(op, "strides"), dl = ints(op, "dilations");
    const auto padding = op.attr<std::string>("padding");
    const std::size_t o = nd == 3 ? 1 : 0;  // H's index in the spatial lists
    const i64 n = x.size(Axis::N), cin = x.size(Axis::C), cout = y.size(Axis::C);
    const i64 D = nd == 3 ? x.size(Axis::D) : 1, H = x.size(Axis::H), W = x.size(Axis::W);
    const i64 kd = nd == 3 ? w.shape()[0] : 1, kh = w.shape()[o], kw = w.shape()[o + 1];
    const i64 sd = nd == 3 ? s.at(0) : 1, dd = nd == 3 ? dl.at(0) : 1;
    const i64 od = nd == 3 ? y.size(Axis::D) : 1, oh = y.size(Axis::H), ow = y.size(Axis::W);
    const i64 pf = deconv_pad(D, od, kd, sd, dd, padding);
    const i64 pt = deconv_pad(H, oh, kh, s.at(o), dl.at(o), padding);
    const i64 pl = deconv_pad(W, ow, kw, s.at(o + 1), dl.at(o + 1), padding);
    use(ctx, "conv_transpose");
    const std::string act = act_expr(ctx, fused_act(op));
    emit_struct(ctx, "ConvTranspose", "p",
                {{"n, d, h, w, cin", csv({n, D, H, W, cin})},
                 {"kd, kh, kw, cout", csv({kd, kh, kw, cout})},
                 {"stride_d, stride_h, stride_w, dil_d, dil_h, dil_w", csv({sd, s.at(o), s.at(o + 1), dd, dl.at(o), dl.at(o + 1)})},
                 {"pad_front, pad_top, pad_left (" + padding + ")", csv({pf, pt, pl})},
                 {"od, oh, ow", csv({od, oh, ow})}});
    ctx.line("graft_rt::conv_transpose_ndhwc({}, {}, {}, {}, p, {});", ctx.input("x"), ctx.input("w"), input_or_null(ctx, "b"),
             ctx.output("y"), act);
}

}  // namespace

void register_conv_emitters(Registry& r) {
    r.add_generator<cpp::Backend>("Conv1D", [](EmitContext& c) { emit_conv(c, true); });
    r.add_generator<cpp::Backend>("Conv2D", [](EmitContext& c) { emit_conv(c, false); });
    r.add_generator<cpp::Backend>("Conv3D", emit_conv3d);
    r.add_generator<cpp::Backend>("DepthwiseConv2D", emit_depthwise);
    r.add_generator<cpp::Backend>("ConvTranspose2D", [](EmitContext& c) { emit_conv_transpose(c, 2); });
    r.add_generator<cpp::Backend>("ConvTranspose3D", [](EmitContext& c) { emit_conv_transpose(c, 3); });
}

}  // namespace graft::cpp
