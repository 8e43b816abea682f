// The convolution family (conv.hpp): ConvAttrs, the schemas, the native kernel builders (cpu/gemm
// and graft_rt's kernels with the fast activation) and the C++ emitters (graft_rt/conv.hpp,
// depthwise.hpp, conv_transpose.hpp).
#include "ops/conv/conv.hpp"

#include <algorithm>

#include "cpu/gemm/conv_kernel.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

using i64 = std::int64_t;
using Kind = ConvAttrs::Kind;

const Axis kMult{"M"};
const Order kOrderTCN{Axis("T"), Axis("C"), Axis("N")};
const Order kOrderDHWCN{Axis("D"), Axis("H"), Axis("W"), Axis("C"), Axis("N")};
const Order kOrderHWCM{Axis("H"), Axis("W"), Axis("C"), kMult};
const Order kOrderHWNC{Axis("H"), Axis("W"), Axis("N"), Axis("C")};
const Order kOrderDHWNC{Axis("D"), Axis("H"), Axis("W"), Axis("N"), Axis("C")};

/// Output size and leading pad of one axis of a transposed convolution: Keras'
/// deconv_output_length and TF's conv2d_transpose (out_pad < 0: Keras' default size).
Span deconv_span(const Operator& op, i64 in, i64 k, i64 stride, i64 dil, const std::string& padding, i64 out_pad) {
    if (padding != "valid" && padding != "same")
        throw UnsupportedError(op.describe() + ": padding '" + padding + "' (expected valid or same)");
    // Every factor at most kMaxElements: the products and sums below stay far inside int64.
    checked::in_range(op.describe(), "stride", stride);
    const i64 span = checked::conv_reach(op.describe(), k, dil);
    if (in == kDynamic) return {kDynamic, 0};  // a free size: the output's is free too, known per run
    checked::in_range(op.describe(), "input size", in, 0);
    i64 out;
    if (out_pad < 0) {
        out = padding == "valid" ? in * stride + std::max<i64>(span - stride, 0) : in * stride;
    } else {
        if (out_pad >= stride)
            shape_fail(op, "output_padding " + std::to_string(out_pad) + " must be smaller than the stride " +
                               std::to_string(stride));
        const i64 pad = padding == "same" ? span / 2 : 0;
        out = (in - 1) * stride + span - 2 * pad + out_pad;
    }
    if (out < 1) shape_fail(op, "output size " + std::to_string(out) + " from input size " + std::to_string(in));
    checked::in_range(op.describe(), "output size", out);
    // TF: the forward convolution from `out` must give back `in`
    const i64 back = padding == "same" ? (out + stride - 1) / stride : (out - span) / stride + 1;
    if (out < span && padding == "valid")
        shape_fail(op, "output size " + std::to_string(out) + " is smaller than the kernel's reach");
    if (back != in)
        shape_fail(
            op, "output size " + std::to_string(out) + " does not convolve back to input size " + std::to_string(in));
    const i64 total = std::max<i64>((in - 1) * stride + span - out, 0);
    return {out, padding == "same" ? total / 2 : 0};
}

/// The spatial axes of x for a rank.
std::vector<Axis> spatial_axes(int rank) {
    if (rank == 1) return {Axis::T};
    if (rank == 2) return {Axis::H, Axis::W};
    return {Axis::D, Axis::H, Axis::W};
}

}  // namespace

ConvAttrs ConvAttrs::of_type(const std::string& type) {
    struct Entry {
        const char* type;
        Kind kind;
        int rank;
    };
    static const Entry kTypes[] = {{kConv1D, Kind::conv, 1},
                                   {kConv2D, Kind::conv, 2},
                                   {kConv3D, Kind::conv, 3},
                                   {kDepthwiseConv2D, Kind::depthwise, 2},
                                   {kConvTranspose2D, Kind::transpose, 2},
                                   {kConvTranspose3D, Kind::transpose, 3}};
    for (const Entry& e : kTypes)
        if (type == e.type) {
            ConvAttrs a;
            a.kind = e.kind, a.rank = e.rank;
            return a;
        }
    throw UnsupportedError("'" + type + "' is not a convolution");
}

ConvAttrs ConvAttrs::parse(const Operator& op) {
    ConvAttrs a = of_type(op.type());
    a.strides = op.attr<std::vector<i64>>("strides");
    a.dilations = op.attr<std::vector<i64>>("dilations");
    a.padding = op.attr<std::string>("padding");
    a.activation = op.attr_or<std::string>("activation", "linear");
    const auto n = static_cast<std::size_t>(a.rank);
    if (a.kind == Kind::transpose) {
        a.output_padding = op.attr_or<std::vector<i64>>("output_padding", {});
        if (a.strides.size() != n || a.dilations.size() != n ||
            (!a.output_padding.empty() && a.output_padding.size() != n))
            shape_fail(op, "strides, dilations and output_padding need " + std::to_string(n) + " entries");
        if (a.output_padding.empty()) a.output_padding.assign(n, -1);
    } else if (a.strides.size() != n || a.dilations.size() != n) {
        shape_fail(op, "strides and dilations need " + std::to_string(n) + " entries");
    }
    if (a.padding == "causal" && a.rank != 1 && a.kind != Kind::transpose)
        shape_fail(op, "causal padding exists only for 1-D convolutions");
    if (a.padding == "explicit") {
        if (a.kind == Kind::transpose) shape_fail(op, "explicit pads are for forward convolutions only");
        a.pads = op.attr<std::vector<i64>>("pads");
        if (a.pads.size() != 2 * n) shape_fail(op, "pads need " + std::to_string(2 * n) + " entries (begin, then end)");
    }
    return a;
}

const Order& ConvAttrs::x_order() const { return rank == 1 ? OrderNTC : rank == 2 ? OrderNHWC : OrderNDHWC; }

const Order& ConvAttrs::w_order() const {
    if (kind == Kind::depthwise) return kOrderHWCM;
    if (kind == Kind::transpose) return rank == 2 ? kOrderHWNC : kOrderDHWNC;
    return rank == 1 ? kOrderTCN : rank == 2 ? OrderHWCN : kOrderDHWCN;
}

graft_rt::Conv3DParams ConvAttrs::geometry(const Operator& op) const {
    const Variable& x = in(op, "x");
    const Variable& w = in(op, "w");
    expect_axes(op, x, x_order(), "input");
    if (w.order() != w_order()) shape_fail(op, "kernel " + w.describe() + " should be in order " + w_order().str());
    const auto r = static_cast<std::size_t>(rank);
    const i64 cin = x.size(Axis::C);
    i64 w_cin = 0, cout = 0;  // the kernel's input channels, the output's channels
    if (kind == Kind::conv)
        w_cin = w.shape()[r], cout = w.shape()[r + 1];
    else if (kind == Kind::depthwise)
        w_cin = w.shape()[2], cout = cin * w.shape()[3];
    else
        cout = w.shape()[r], w_cin = w.shape()[r + 1];
    if (w_cin != cin)
        shape_fail(op, "kernel " + w.describe() + " expects " + std::to_string(w_cin) +
                           " input channels, the input has " + std::to_string(cin));
    // Per axis d, h, w (unit sizes in front of the op's spatial axes).
    i64 size[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, out[3] = {1, 1, 1},
        pad[3] = {0, 0, 0};
    const std::vector<Axis> axes = spatial_axes(rank);
    for (std::size_t i = 0; i < r; ++i) {
        const std::size_t a = 3 - r + i;
        size[a] = x.size(axes[i]), k[a] = w.shape()[i], s[a] = strides[i], dil[a] = dilations[i];
        const Span span = kind == Kind::transpose ? deconv_span(op, size[a], k[a], s[a], dil[a], padding, output_padding[i])
                          : padding == "explicit"
                              ? explicit_span(op, size[a], k[a], s[a], dil[a], pads[i], pads[i + r], false)
                              : conv_span(op, size[a], k[a], s[a], dil[a], padding);
        out[a] = span.out, pad[a] = span.pad_begin;
    }
    if (auto* b = op.input_or_null("b"); b && (b->order() != OrderC || b->shape()[0] != cout))
        shape_fail(op, "bias " + b->describe() + " should be C [" + std::to_string(cout) + "]");
    return {x.size(Axis::N), size[0], size[1], size[2], cin,    k[0],   k[1],   k[2],   cout,  s[0], s[1], s[2],
            dil[0],          dil[1],  dil[2],  pad[0],  pad[1], pad[2], out[0], out[1], out[2]};
}

Shape ConvAttrs::output_shape(const graft_rt::Conv3DParams& g) const {
    if (rank == 1) return {g.n, g.ow, g.cout};
    if (rank == 2) return {g.n, g.oh, g.ow, g.cout};
    return {g.n, g.od, g.oh, g.ow, g.cout};
}

graft_rt::Conv2DParams ConvAttrs::conv2d(const Operator& op) const {
    const graft_rt::Conv3DParams g = geometry(op);
    return {g.n,        g.h,     g.w,     g.cin,     g.kh,       g.kw, g.cout, g.stride_h,
            g.stride_w, g.dil_h, g.dil_w, g.pad_top, g.pad_left, g.oh, g.ow};
}

graft_rt::DepthwiseParams ConvAttrs::depthwise(const Operator& op) const {
    const graft_rt::Conv3DParams g = geometry(op);
    return {g.n,     g.h,       g.w,        g.cin,      in(op, "w").shape()[3],
            g.kh,    g.kw,      g.stride_h, g.stride_w, g.dil_h,
            g.dil_w, g.pad_top, g.pad_left, g.oh,       g.ow};
}

namespace {

Outputs infer_conv(const Operator& op) {
    const ConvAttrs a = ConvAttrs::parse(op);
    const graft_rt::Conv3DParams g = a.geometry(op);
    if (op.attrs().has("activation")) act_params(op, a.activation);
    const TensorType y{a.x_order(), a.output_shape(g)};
    if (const Variable* r = op.input_or_null("r"); r && (r->order() != y.order || r->shape() != y.shape))
        shape_fail(op, "residual " + r->describe() + " should have the output's order and shape");
    return {{"y", y}};
}

/// Conv1D / Conv2D: constant weights prepacked (Winograd or the implicit GEMM, cpu/gemm), else
/// the GEMM tap by tap; a residual r is added before the activation.
std::unique_ptr<native::Kernel> build_conv2d(native::BuildContext& b) {
    const Operator& op = b.op();
    const ConvAttrs a = ConvAttrs::parse(op);
    const graft_rt::Conv2DParams p = a.conv2d(op);
    const cpu::ActParams act = act_params(op, a.activation);
    auto x = b.in("x"), w = b.in("w"), y = b.out("y");
    const auto bias = optional_in(b, "b"), res = optional_in(b, "r");
    const Variable& wv = in(op, "w");
    if (wv.is_constant())
        return cpu::gemm::make_conv2d_kernel(b, p, static_cast<const ConstantVariable&>(wv), x, bias, res, y,
                                             act);
    const graft_rt::Conv3DParams p3 = graft_rt::as_3d(p);
    const i64 count = p.n * p.oh * p.ow * p.cout;
    return native::make_kernel([=](const native::RunContext& c) {
        if (!res) return cpu::conv3d_ndhwc_unpacked(c.at(x), c.at(w), at_or_null(c, bias), c.at(y), p3, act);
        float* out = c.at(y);
        const float* r = c.at(*res);
        cpu::conv3d_ndhwc_unpacked(c.at(x), c.at(w), at_or_null(c, bias), out, p3, cpu::ActParams{});
        for (i64 i = 0; i < count; ++i) out[i] += r[i];
        cpu::activate(out, out, count, act);
    });
}

/// Conv3D (the GEMM tap by tap), DepthwiseConv2D and ConvTranspose2D / 3D (graft_rt's kernels)
/// with the fast activation.
std::unique_ptr<native::Kernel> build_other(native::BuildContext& b) {
    const Operator& op = b.op();
    const ConvAttrs a = ConvAttrs::parse(op);
    const cpu::ActParams act = act_params(op, a.activation);
    auto x = b.in("x"), w = b.in("w"), y = b.out("y");
    const auto bias = optional_in(b, "b");
    if (a.kind == Kind::depthwise) {
        const graft_rt::DepthwiseParams p = a.depthwise(op);
        return native::make_kernel([=](const native::RunContext& c) {
            cpu::depthwise2d_nhwc(c.at(x), c.at(w), at_or_null(c, bias), c.at(y), p, act, c.pool);
        });
    }
    const graft_rt::Conv3DParams p = a.geometry(op);
    if (a.kind == Kind::transpose)
        return native::make_kernel([=](const native::RunContext& c) {
            graft_rt::conv_transpose_ndhwc(c.at(x), c.at(w), at_or_null(c, bias), c.at(y), p, cpu::ActivateRows{act});
        });
    return native::make_kernel([=](const native::RunContext& c) {
        cpu::conv3d_ndhwc_unpacked(c.at(x), c.at(w), at_or_null(c, bias), c.at(y), p, act);
    });
}

// ---- C++ emitters ------------------------------------------------------------------------------

constexpr i64 kIm2colMaxFloats = 1 << 20;  // 4 MB

/// Conv1D / Conv2D: graft_rt::conv2d_nhwc on the weights packed, im2col of enough output rows
/// for tall products (>= 48 rows of A) within 4 MB of scratch (the native kernels group taps
/// into k blocks the same way); a residual r is added before the activation.
void emit_conv2d(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const ConvAttrs a = ConvAttrs::parse(op);
    const graft_rt::Conv2DParams p = a.conv2d(op);
    const i64 K = p.kh * p.kw * p.cin;
    cpp::use(ctx, "conv");
    const std::string wp = cpp::packed_weight(ctx, "w", K, p.cout);
    // With a residual input the activation comes after the add, so the product runs linear.
    const bool residual = op.has_input("r");
    const std::string act = cpp::act_expr(ctx, residual ? "linear" : a.activation);
    i64 block_rows = 0;
    if (!graft_rt::is_pointwise(p) && p.ow > 0 && K > 0 && p.ow * K <= kIm2colMaxFloats)
        block_rows =
            std::min<i64>(std::min<i64>(p.oh, (48 + p.ow - 1) / p.ow), std::max<i64>(1, kIm2colMaxFloats / (p.ow * K)));
    const std::string work = block_rows ? ctx.scratch(static_cast<std::size_t>(block_rows * p.ow * K)) : "nullptr";
    cpp::emit_struct(ctx, "Conv2DParams", "p",
                     {{"n, h, w, cin", cpp::csv({p.n, p.h, p.w, p.cin})},
                      {a.rank == 1 ? "kh, kw (taps), cout" : "kh, kw, cout", cpp::csv({p.kh, p.kw, p.cout})},
                      {"stride_h, stride_w, dil_h, dil_w", cpp::csv({p.stride_h, p.stride_w, p.dil_h, p.dil_w})},
                      {"pad_top, pad_left (" + a.padding + ")", cpp::csv({p.pad_top, p.pad_left})},
                      {"oh, ow", cpp::csv({p.oh, p.ow})}});
    ctx.constant_i64("block_rows", block_rows, "output rows per product (their patches in work); 0: tap by tap");
    ctx.line("graft_rt::conv2d_nhwc({}, {}, {}, {}, p, {}, block_rows, {});", ctx.input("x"), wp,
             cpp::input_or_null(ctx, "b"), ctx.output("y"), act, work);
    if (!residual) return;
    cpp::use(ctx, "elementwise");
    ctx.constant_i64("n_out", p.n * p.oh * p.ow * p.cout, "output elements");
    ctx.comment("residual r (fused Add), then the activation");
    ctx.line("graft_rt::merge2(graft_rt::MergeOp::add, {}, {}, {}, n_out);", ctx.output("y"), ctx.input("r"),
             ctx.output("y"));
    ctx.line("graft_rt::activation({}, {}, n_out, {});", ctx.output("y"), ctx.output("y"),
             cpp::act_expr(ctx, a.activation));
}

/// Conv3D (packed weights), DepthwiseConv2D and ConvTranspose2D / 3D (the Keras kernels as they are).
void emit_other(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const ConvAttrs a = ConvAttrs::parse(op);
    const std::string pads = " (" + a.padding + ")";
    if (a.kind == Kind::depthwise) {
        const graft_rt::DepthwiseParams p = a.depthwise(op);
        cpp::use(ctx, "depthwise");
        const std::string act = cpp::act_expr(ctx, a.activation);
        cpp::emit_struct(ctx, "DepthwiseParams", "p",
                         {{"n, h, w, cin, mult", cpp::csv({p.n, p.h, p.w, p.cin, p.mult})},
                          {"kh, kw", cpp::csv({p.kh, p.kw})},
                          {"stride_h, stride_w, dil_h, dil_w", cpp::csv({p.stride_h, p.stride_w, p.dil_h, p.dil_w})},
                          {"pad_top, pad_left" + pads, cpp::csv({p.pad_top, p.pad_left})},
                          {"oh, ow", cpp::csv({p.oh, p.ow})}});
        ctx.line("graft_rt::depthwise2d_nhwc({}, {}, {}, {}, p, {});", ctx.input("x"), ctx.input("w"),
                 cpp::input_or_null(ctx, "b"), ctx.output("y"), act);
        return;
    }
    const graft_rt::Conv3DParams p = a.geometry(op);
    const bool transpose = a.kind == Kind::transpose;
    cpp::use(ctx, transpose ? "conv_transpose" : "conv");
    const std::string w = transpose ? ctx.input("w") : cpp::packed_weight(ctx, "w", p.kd * p.kh * p.kw * p.cin, p.cout);
    const std::string act = cpp::act_expr(ctx, a.activation);
    cpp::emit_struct(ctx, transpose ? "ConvTransposeParams" : "Conv3DParams", "p",
                     {{"n, d, h, w, cin", cpp::csv({p.n, p.d, p.h, p.w, p.cin})},
                      {"kd, kh, kw, cout", cpp::csv({p.kd, p.kh, p.kw, p.cout})},
                      {"stride_d, stride_h, stride_w, dil_d, dil_h, dil_w",
                       cpp::csv({p.stride_d, p.stride_h, p.stride_w, p.dil_d, p.dil_h, p.dil_w})},
                      {"pad_front, pad_top, pad_left" + pads, cpp::csv({p.pad_front, p.pad_top, p.pad_left})},
                      {"od, oh, ow", cpp::csv({p.od, p.oh, p.ow})}});
    ctx.line("graft_rt::{}({}, {}, {}, {}, p, {});", transpose ? "conv_transpose_ndhwc" : "conv3d_ndhwc",
             ctx.input("x"), w, cpp::input_or_null(ctx, "b"), ctx.output("y"), act);
}

void add(Registry& r, const char* type, const char* doc) {
    const ConvAttrs proto = ConvAttrs::of_type(type);
    const bool conv2d = proto.kind == Kind::conv && proto.rank < 3;  // Conv1D / Conv2D: the 2-D kernels
    std::vector<std::string> inputs{"x", "w", "b?"};
    if (conv2d) inputs.push_back("r?");
    // A following Activation folds into every convolution (fuse_activation: each kernel applies
    // its `activation` to the rows it writes); a BatchNormalization into Conv1D and Conv2D
    // (fold_batchnorm: y = x . w + b with w's last axis the output channel).
    OpDef(type, std::move(inputs), infer_conv, doc)
        .required_order([proto](const Operator&, const std::string& input) -> std::optional<Order> {
            if (input == "x" || input == "r") return proto.x_order();
            if (input == "w") return proto.w_order();
            return OrderC;
        })
        .activation_epilogue(true)
        .folds_channel_scale(conv2d)
        .add(r, conv2d ? build_conv2d : build_other, conv2d ? emit_conv2d : emit_other);
}

}  // namespace

void register_conv(Registry& r) {
    add(r, kConv1D,
        "1-D convolution, x NTC, w TCN [k, c_in, c_out]; attrs strides[1], dilations[1], padding valid|same|explicit (pads[2])|causal");
    add(r, kConv2D,
        "2-D convolution, x NHWC, w HWCN [kh, kw, c_in, c_out]; attrs strides[2], dilations[2], padding valid|same|explicit (pads[4])");
    add(r, kConv3D,
        "3-D convolution, x NDHWC, w DHWCN [kd, kh, kw, c_in, c_out]; attrs strides[3], dilations[3], padding "
        "valid|same|explicit (pads[6])");
    add(r, kDepthwiseConv2D,
        "depthwise 2-D convolution, x NHWC, w HWC[M] [kh, kw, c_in, multiplier], output channel c*M+m; attrs "
        "strides[2], "
        "dilations[2], padding valid|same|explicit (pads[4])");
    add(r, kConvTranspose2D,
        "transposed 2-D convolution, x NHWC, w HWNC [kh, kw, c_out, c_in]; attrs strides[2], dilations[2], padding "
        "valid|same, "
        "output_padding[2] (optional)");
    add(r, kConvTranspose3D,
        "transposed 3-D convolution, x NDHWC, w DHWNC [kd, kh, kw, c_out, c_in]; attrs strides[3], dilations[3], "
        "padding "
        "valid|same, output_padding[3] (optional)");
}

}  // namespace graft::ops
