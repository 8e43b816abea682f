// Conv and ConvTranspose (1-D to 3-D, channels first) as graft's convolutions (channels last,
// Keras kernel layouts: the weights are rearranged now; the optimizer lays the data out).
//   - pads that are TF's 'same' or zero become the op's own padding; others an explicit zero Pad
//     before a 'valid' convolution;
//   - group = 1: ConvND; group = C_in (2-D): DepthwiseConv2D; other groups: one convolution per
//     group on its channel slice, concatenated;
//   - ConvTranspose: a 'valid' transposed convolution, then its output cropped (pads) or extended
//     (output_padding), then the bias.
#include "frontend/onnx/ops/ops.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

using i64 = std::int64_t;

struct Geometry {
    std::size_t nd;  // spatial axes
    std::vector<i64> kernel, strides, dilations, pads;  // pads: begin..., end...
    std::string auto_pad;
};

/// The node's geometry for input xs and weights ws; `lifted`: a 1-D node run as 2-D (xs and ws
/// have a unit height already; the attributes get one).
Geometry read_geometry(NodeContext& ctx, const Shape& xs, const Shape& ws, bool lifted = false) {
    const auto& c = ctx.config();
    Geometry g;
    g.nd = xs.size() - 2;
    const std::size_t n = g.nd - (lifted ? 1 : 0);
    g.kernel.assign(ws.begin() + 2, ws.end());
    if (c.has("kernel_shape") && c.get_ints("kernel_shape") != std::vector<i64>(g.kernel.end() - static_cast<std::ptrdiff_t>(n), g.kernel.end()))
        ctx.fail_shape("kernel_shape does not match the weights' shape " + shape_str(ws));
    // Each at most kMaxElements (get_sizes): the products below stay inside int64.
    g.strides = c.has("strides") ? c.get_sizes("strides", n) : std::vector<i64>(n, 1);
    g.dilations = c.has("dilations") ? c.get_sizes("dilations", n) : std::vector<i64>(n, 1);
    g.pads = c.has("pads") ? c.get_sizes("pads", 2 * n, 0) : std::vector<i64>(2 * n, 0);
    if (lifted) {
        g.strides.insert(g.strides.begin(), 1);
        g.dilations.insert(g.dilations.begin(), 1);
        g.pads = {0, g.pads[0], 0, g.pads[1]};
    }
    g.auto_pad = c.get_string("auto_pad", "NOTSET");
    for (auto v : g.strides)
        if (v < 1) ctx.fail_format("strides must be at least 1");
    for (auto v : g.dilations)
        if (v < 1) ctx.fail_format("dilations must be at least 1");
    for (auto v : g.pads)
        if (v < 0) ctx.fail_format("pads must not be negative");
    return g;
}

/// TF's 'same' pads of one axis.
std::pair<i64, i64> same_pads(i64 in, i64 k, i64 s, i64 d) {
    const i64 out = (in + s - 1) / s, total = std::max<i64>((out - 1) * s + (k - 1) * d + 1 - in, 0);
    return {total / 2, total - total / 2};
}

/// The pads of a (forward) convolution after auto_pad.
std::vector<i64> conv_pads(NodeContext& ctx, const Geometry& g, const Shape& xs) {
    if (g.auto_pad == "NOTSET") return g.pads;
    std::vector<i64> p(2 * g.nd, 0);
    if (g.auto_pad == "VALID") return p;
    if (g.auto_pad != "SAME_UPPER" && g.auto_pad != "SAME_LOWER") ctx.fail_format("auto_pad '" + g.auto_pad + "'");
    for (std::size_t i = 0; i < g.nd; ++i) {
        auto [b, e] = same_pads(xs[i + 2], g.kernel[i], g.strides[i], g.dilations[i]);
        if (g.auto_pad == "SAME_LOWER") std::swap(b, e);
        p[i] = b, p[i + g.nd] = e;
    }
    return p;
}

/// W [M, C, k...] (ONNX) as graft's [k..., C, M] (out_last) or [k..., M, C].
std::vector<float> kernel_last(const std::vector<float>& w, const Shape& ws, bool swap) {
    const i64 M = ws[0], C = ws[1];
    i64 K = 1;
    for (std::size_t i = 2; i < ws.size(); ++i) K *= ws[i];
    std::vector<float> out(w.size());
    for (i64 m = 0; m < M; ++m)
        for (i64 c = 0; c < C; ++c)
            for (i64 k = 0; k < K; ++k)
                out[static_cast<std::size_t>(swap ? (k * M + m) * C + c : (k * C + c) * M + m)] = w[static_cast<std::size_t>((m * C + c) * K + k)];
    return out;
}

const char* conv_type(std::size_t nd) { return nd == 1 ? ops::kConv1D : nd == 2 ? ops::kConv2D : ops::kConv3D; }
Order kernel_order(std::size_t nd, bool transpose) {
    if (nd == 1) return transpose ? Order{Axis::T, Axis::N, Axis::C} : Order{Axis::T, Axis::C, Axis::N};
    if (nd == 2) return transpose ? Order{Axis::H, Axis::W, Axis::N, Axis::C} : OrderHWCN;
    return transpose ? Order{Axis::D, Axis::H, Axis::W, Axis::N, Axis::C} : Order{Axis::D, Axis::H, Axis::W, Axis::C, Axis::N};
}

Shape kernel_shape(const Geometry& g, i64 a, i64 b) {
    Shape s(g.kernel.begin(), g.kernel.end());
    s.push_back(a);
    s.push_back(b);
    return s;
}

Attributes conv_attrs(const Geometry& g, const std::string& padding) {
    Attributes a;
    a.set("strides", g.strides);
    a.set("dilations", g.dilations);
    a.set("padding", padding);
    return a;
}

/// One group (or the whole) convolution of x (positional, padded already if `padding` is valid).
Value conv_one(NodeContext& ctx, const Value& x, const Geometry& g, const std::string& padding, std::vector<float> w, i64 cin, i64 cout,
               const std::vector<float>& bias, const std::string& suffix) {
    NamedVars ins{{"x", x.var}, {"w", ctx.constant(ctx.layer_name() + "/w" + suffix, kernel_order(g.nd, false), kernel_shape(g, cin, cout), std::move(w))}};
    if (!bias.empty()) ins.emplace_back("b", ctx.constant(ctx.layer_name() + "/b" + suffix, OrderC, {cout}, bias));
    return emit(ctx, conv_type(g.nd), std::move(ins), conv_attrs(g, padding), x.logical, suffix);
}

void conv(NodeContext& ctx) {
    expect_inputs(ctx, 2, 3);
    const HostTensor* W = ctx.known(1);
    const Value& x0 = ctx.input(0);
    const std::size_t rank = x0.logical.ndim();
    if (rank < 3 || rank > 5) ctx.fail_unsupported("a rank-" + std::to_string(rank) + " input (graft has 1-D, 2-D and 3-D convolutions)");
    Value x = ctx.relabel(x0, positional_order(rank));
    const Shape xs = logical_shape(x), ws = W ? W->shape : logical_shape(ctx.input(1));
    if (ws.size() != rank) ctx.fail_shape("weights of shape " + shape_str(ws) + " for an input of rank " + std::to_string(rank));
    const i64 group = ctx.config().get_int("group", 1), C = xs[1], M = ws[0];
    if (group < 1 || C % group != 0 || M % group != 0 || ws[1] * group != C)
        ctx.fail_shape("group " + std::to_string(group) + " does not fit input channels " + std::to_string(C) + " and weights " + shape_str(ws));
    const Geometry g = read_geometry(ctx, xs, ws);
    for (std::size_t i = 2; i < rank; ++i)
        if (xs[i] == kDynamic) ctx.fail_unsupported("a dynamic spatial size");
    if (!W && group != 1) ctx.fail_unsupported("a grouped convolution whose weights are computed when the model runs");
    std::vector<float> bias;
    if (ctx.has_input(2) && W) {
        const HostTensor* B = ctx.known(2);
        if (!B || B->numel() != M) ctx.fail_unsupported("a bias that is not a constant of " + std::to_string(M) + " values");
        bias = B->floats();
    }
    // Padding: the op's own when the pads are TF's 'same' (or zero), else an explicit Pad.
    const std::vector<i64> pads = conv_pads(ctx, g, xs);
    bool zero = true, same = true;
    for (std::size_t i = 0; i < g.nd; ++i) {
        const auto [b, e] = same_pads(xs[i + 2], g.kernel[i], g.strides[i], g.dilations[i]);
        zero = zero && pads[i] == 0 && pads[i + g.nd] == 0;
        same = same && pads[i] == b && pads[i + g.nd] == e;
    }
    std::string padding = zero ? "valid" : "same";
    if (!zero && !same) {
        std::vector<i64> begin(rank, 0), end(rank, 0);
        for (std::size_t i = 0; i < g.nd; ++i) begin[i + 2] = pads[i], end[i + 2] = pads[i + g.nd];
        x = pad_or_crop(ctx, x, begin, end);
        padding = "valid";
    }
    if (!W) {  // weights computed when the model runs: ONNX's [M, C, k...] named N, C, spatial is the
               // kernel layout's axes by name (HWCN, ...): the optimizer transposes it
        NamedVars ins{{"x", x.var}, {"w", laid_out(ctx, ctx.input(1), positional_order(rank), kernel_order(g.nd, false), "w")}};
        if (ctx.has_input(2)) ins.emplace_back("b", ctx.relabel(ctx.input(2), OrderC).var);
        return ctx.set_outputs({emit(ctx, conv_type(g.nd), std::move(ins), conv_attrs(g, padding), x.logical)});
    }
    const std::vector<float> wv = W->floats();
    if (group == 1) return ctx.set_outputs({conv_one(ctx, x, g, padding, kernel_last(wv, ws, false), C, M, bias, "")});
    const i64 mult = M / group;
    if (group == C && g.nd == 2) {  // depthwise: w [kh, kw, C, mult], output channel c * mult + j
        std::vector<float> w = kernel_last(wv, ws, true);  // [kh, kw, M, 1] = [kh, kw, C, mult]
        NamedVars ins{{"x", x.var}, {"w", ctx.constant(ctx.layer_name() + "/w", Order{Axis::H, Axis::W, Axis::C, Axis("M")}, kernel_shape(g, C, mult), std::move(w))}};
        if (!bias.empty()) ins.emplace_back("b", ctx.constant(ctx.layer_name() + "/b", OrderC, {M}, bias));
        return ctx.set_outputs({emit(ctx, ops::kDepthwiseConv2D, std::move(ins), conv_attrs(g, padding), x.logical)});
    }
    // Grouped: a convolution per channel slice, concatenated along C.
    const i64 cg = C / group;
    const std::size_t per = static_cast<std::size_t>(cg * numel(Shape(g.kernel.begin(), g.kernel.end())));
    NamedVars parts;
    for (i64 k = 0; k < group; ++k) {
        std::vector<i64> begin(rank, 0), end(rank, 0);
        begin[1] = -k * cg, end[1] = -(C - (k + 1) * cg);
        const Value slice = pad_or_crop(ctx, x, begin, end, "slice" + std::to_string(k));
        Shape gws = ws;
        gws[0] = mult;
        std::vector<float> gw(wv.begin() + static_cast<std::ptrdiff_t>(k * mult * static_cast<i64>(per)),
                              wv.begin() + static_cast<std::ptrdiff_t>((k + 1) * mult * static_cast<i64>(per)));
        std::vector<float> gb;
        if (!bias.empty()) gb.assign(bias.begin() + k * mult, bias.begin() + (k + 1) * mult);
        parts.emplace_back("x" + std::to_string(k),
                           conv_one(ctx, slice, g, padding, kernel_last(gw, gws, false), cg, mult, gb, "g" + std::to_string(k)).var);
    }
    Attributes a;
    a.set("axis", Axis::C);
    ctx.set_outputs({emit(ctx, ops::kConcat, std::move(parts), std::move(a), x.logical)});
}

void conv_transpose(NodeContext& ctx) {
    expect_inputs(ctx, 2, 3);
    const HostTensor* W = ctx.known(1);
    const Value x0 = ctx.input(0);
    const std::size_t rank = x0.logical.ndim();
    if (rank < 3 || rank > 5) ctx.fail_unsupported("a rank-" + std::to_string(rank) + " input (graft has 1-D to 3-D transposed convolutions)");
    Value x = ctx.relabel(x0, positional_order(rank));
    Value wvar = W ? Value{} : ctx.relabel(ctx.input(1), positional_order(rank));
    // 1-D runs as 2-D over [N, C, 1, L] with a [C_in, M, 1, k] kernel.
    const bool one_d = rank == 3;
    if (one_d) {
        const Shape s = logical_shape(x);
        x = reshape(ctx, x, {s[0], s[1], 1, s[2]}, "as2d");
        if (!W) {
            const Shape w = logical_shape(wvar);
            wvar = reshape(ctx, wvar, {w[0], w[1], 1, w[2]}, "w2d");
        }
    }
    const std::size_t r2 = one_d ? 4 : rank;
    Shape xs = logical_shape(x), ws = W ? W->shape : logical_shape(wvar);
    if (one_d && W) ws.insert(ws.begin() + 2, 1);
    if (ws.size() != r2) ctx.fail_shape("weights of shape " + shape_str(ws) + " for an input of rank " + std::to_string(rank));
    if (ctx.config().get_int("group", 1) != 1) ctx.fail_unsupported("grouped transposed convolution");
    const i64 C = xs[1], M = ws[1];
    if (ws[0] != C) ctx.fail_shape("weights " + shape_str(ws) + " for " + std::to_string(C) + " input channels");
    Geometry g = read_geometry(ctx, xs, ws, one_d);
    const auto& c = ctx.config();
    std::vector<i64> out_pad = c.has("output_padding") ? c.get_sizes("output_padding", rank - 2, 0) : std::vector<i64>(rank - 2, 0);
    std::vector<i64> out_shape = c.has("output_shape") ? c.get_sizes("output_shape", rank - 2) : std::vector<i64>{};
    if (one_d) {
        out_pad.insert(out_pad.begin(), 0);
        if (!out_shape.empty()) out_shape.insert(out_shape.begin(), 1);
    }
    // The full ('valid', no output padding) result is (in - 1) * s + (k - 1) * d + 1 per axis;
    // ONNX's output drops pads[begin] / pads[end] of it and adds output_padding at the end.
    std::vector<i64> begin(r2, 0), end(r2, 0);
    for (std::size_t i = 0; i < g.nd; ++i) {
        const i64 full = (xs[i + 2] - 1) * g.strides[i] + (g.kernel[i] - 1) * g.dilations[i] + 1;
        i64 pb = g.pads[i], pe = g.pads[i + g.nd];
        if (!out_shape.empty() || g.auto_pad == "SAME_UPPER" || g.auto_pad == "SAME_LOWER") {
            const i64 want = !out_shape.empty() ? out_shape[i] : xs[i + 2] * g.strides[i];
            const i64 total = full + out_pad[i] - want;
            if (total < 0) {  // a larger output_shape: zeros after the full result (ONNX's own reference)
                pb = 0, pe = total;
            } else {
                pb = g.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
                pe = total - pb;
            }
        } else if (g.auto_pad == "VALID") {
            pb = pe = 0;
        }
        begin[i + 2] = -pb, end[i + 2] = out_pad[i] - pe;
    }
    // W [C_in, M, k...] as [k..., M, C_in]: kernel_last with the first two swapped.
    // A runtime W [C_in, M, k...]: its dimensions named C, N, spatial are the kernel layout's
    // (H W N C: N the output channels) by name, and the optimizer transposes it.
    Variable* w = nullptr;
    if (W) {
        w = ctx.constant(ctx.layer_name() + "/w", kernel_order(g.nd, true), kernel_shape(g, M, C), kernel_last(W->floats(), ws, false));
    } else {
        std::vector<Axis> names = positional_order(r2).axes();
        std::swap(names[0], names[1]);
        w = laid_out(ctx, wvar, Order(names), kernel_order(g.nd, true), "w");
    }
    Attributes a = conv_attrs(g, "valid");
    a.set("output_padding", std::vector<i64>(g.nd, 0));
    Value y = emit(ctx, r2 == 4 ? ops::kConvTranspose2D : ops::kConvTranspose3D, {{"x", x.var}, {"w", w}}, std::move(a), x.logical);
    y = pad_or_crop(ctx, y, begin, end, "crop");
    if (ctx.has_input(2)) {
        const HostTensor* B = ctx.known(2);
        Variable* b = B ? ctx.constant(ctx.layer_name() + "/b", OrderC, {M}, B->floats()) : ctx.relabel(ctx.input(2), OrderC).var;
        if (b->numel() != M) ctx.fail_shape("a bias of " + std::to_string(b->numel()) + " values for " + std::to_string(M) + " channels");
        Attributes ba;
        ba.set("axis", Axis::C);
        y = emit(ctx, ops::kBiasAdd, {{"x", y.var}, {"b", b}}, std::move(ba), y.logical, "bias");
    }
    if (one_d) {
        const Shape ys = logical_shape(y);
        y = reshape(ctx, y, {ys[0], ys[1], ys[3]}, "as1d");
    }
    ctx.set_outputs({y});
}

}  // namespace

void register_conv(Registry& r) {
    add(r, "Conv", conv);
    add(r, "ConvTranspose", conv_transpose);
}

}  // namespace graft::onnx
