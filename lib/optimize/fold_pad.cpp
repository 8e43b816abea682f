// Pass fold_pad: a zero Pad of spatial axes read by one forward convolution (Conv1D, Conv2D,
// Conv3D, DepthwiseConv2D) alone becomes the convolution's own padding ('explicit' pads). ONNX
// exporters write padded strided convolutions this way whenever the pads are not TF's 'same'
// (torch's 3x3 stride-2 layers: one row and column on each side), Keras models as ZeroPadding2D
// then a 'valid' Conv2D. Unfolded, the Pad copies the whole input into a larger buffer first.
// The Pad may also reach the convolution through a Transpose read by it alone (the ONNX frontend
// transposes NCHW inputs into the convolution's NHWC after the Pad); the Transpose then reads the
// Pad's input. The padded values are zeros either way, so the result is the same to the bit.
// It does not fire for edge or reflect padding, a non-zero value, cropping (negative pads), a pad
// of the batch or channel axis, a causal convolution, or a 'same' one over a free size (its pads
// depend on the size).
#include <algorithm>

#include "ops/conv/conv.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"
#include "graft_rt/shape.hpp"
#include "ops/shape/shape.hpp"
#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

namespace {

using i64 = std::int64_t;

bool forward_conv(const std::string& type) {
    return type == ops::kConv1D || type == ops::kConv2D || type == ops::kConv3D || type == ops::kDepthwiseConv2D;
}

/// The spatial axes of a convolution of `rank`, in its pads' order.
std::vector<Axis> spatial(int rank) {
    if (rank == 1) return {Axis::T};
    if (rank == 2) return {Axis::H, Axis::W};
    return {Axis::D, Axis::H, Axis::W};
}

/// The convolution's pads as begin..., end... over its padded input xp; empty when they cannot
/// be made explicit (causal, or 'same' over a free size).
std::vector<i64> current_pads(const Operator& conv, const ops::ConvAttrs& a, const Variable& xp) {
    const auto r = static_cast<std::size_t>(a.rank);
    if (a.padding == "valid") return std::vector<i64>(2 * r, 0);
    if (a.padding == "explicit") return a.pads;
    if (a.padding != "same") return {};
    const auto& w = conv.input("w")->shape();
    const auto axes = spatial(a.rank);
    std::vector<i64> pads(2 * r, 0);
    for (std::size_t i = 0; i < r; ++i) {
        const i64 in = xp.size(axes[i]);
        if (in == kDynamic) return {};
        const ops::Span s = ops::conv_span(conv, in, w[i], a.strides[i], a.dilations[i], "same");
        const i64 reach = checked::conv_reach(conv.describe(), w[i], a.dilations[i]);
        const i64 total = std::max<i64>((s.out - 1) * a.strides[i] + reach - in, 0);
        pads[i] = s.pad_begin;
        pads[i + r] = total - s.pad_begin;
    }
    return pads;
}

/// The pads `pad` adds to the conv's spatial axes (begin..., end...), or empty when it is not a
/// zero padding of those axes alone.
std::vector<i64> zero_pads(const Operator& pad, int rank) {
    const ops::PadAttrs p = ops::PadAttrs::parse(pad);
    if (p.mode != graft_rt::pad_constant || p.value != 0.f) return {};
    const auto axes = spatial(rank);
    const auto r = static_cast<std::size_t>(rank);
    std::vector<i64> out(2 * r, 0);
    for (std::size_t k = 0; k < p.axes.ndim(); ++k) {
        const auto it = std::find(axes.begin(), axes.end(), p.axes[k]);
        if (p.begin[k] < 0 || p.end[k] < 0) return {};
        if (it == axes.end()) {
            if (p.begin[k] != 0 || p.end[k] != 0) return {};
            continue;
        }
        const auto i = static_cast<std::size_t>(it - axes.begin());
        out[i] += p.begin[k];
        out[i + r] += p.end[k];
    }
    return out;
}

}  // namespace

bool fold_pad(Graph& g, const Registry&) {
    bool changed = false;
    for (Operator* conv : g.topological_order()) {
        if (!forward_conv(conv->type())) continue;
        Variable* xp = conv->input("x");
        Operator* between = nullptr;  // a Transpose from the Pad's output to the conv's input
        Operator* pad = xp->producer();
        if (pad && pad->type() == ops::kTranspose && only_read_by(g, xp, conv)) {
            between = pad;
            pad = between->input("x")->producer();
        }
        if (!pad || pad->type() != ops::kPad) continue;
        Variable* padded = pad->output("y");
        if (!only_read_by(g, padded, between ? between : conv) || !only_read_by(g, xp, conv)) continue;
        const ops::ConvAttrs a = ops::ConvAttrs::parse(*conv);
        const std::vector<i64> have = current_pads(*conv, a, *xp), add = zero_pads(*pad, a.rank);
        if (have.empty() || add.empty()) continue;
        std::vector<i64> pads(have.size());
        for (std::size_t i = 0; i < pads.size(); ++i) pads[i] = have[i] + add[i];

        Variable* x = pad->input("x");
        if (between) {  // the Transpose now reads x: a new output of x's sizes in its order
            const Order order = xp->order();
            Shape shape;
            for (std::size_t d = 0; d < order.ndim(); ++d) shape.push_back(x->size(order[d]));
            Variable* t = g.add_variable(g.unique_name(xp->name() + "/unpadded"), x->dtype(), order, shape);
            const std::string name = between->name(), layer = between->layer();
            Attributes ta = between->attrs();
            g.remove_op(between);
            g.add_op(ops::kTranspose, name, {{"x", x}}, {{"y", t}}, std::move(ta))->set_layer(layer);
            x = t;
        }
        NamedVars inputs = conv->inputs();
        for (auto& [port, v] : inputs)
            if (port == "x") v = x;
        Attributes attrs = conv->attrs();
        attrs.set("padding", std::string("explicit"));
        attrs.set("pads", pads);
        rebuild(g, conv, std::move(inputs), std::move(attrs));
        g.remove_op(pad);
        changed = true;
    }
    return finish_pass(g, changed);
}

}  // namespace graft::optimize::passes
