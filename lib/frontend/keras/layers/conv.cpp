// Keras convolutions: Conv1D/2D/3D, DepthwiseConv1D/2D, SeparableConv1D/2D, Conv1D/2D/3DTranspose,
// channels_last and channels_first, valid/same (causal for Conv1D), strides, dilation.
// Kernels are brought to Keras 2's layout ((k..., c_in, c_out); transposed: (k..., c_out, c_in)):
//  - Keras 1 (keras 1.2.2 convolutional.py): Convolution2D/3D with dim_ordering 'th' store
//    (nb_filter, stack, k...) -> transposed like Keras 2's preprocess_weights_for_loading;
//    Convolution1D stores (filter_length, 1, input_dim, nb_filter) (Keras 1.1: (nb_filter,
//    input_dim, filter_length, 1)).
//  - backend 'theano' files hold true-convolution kernels: flipped along every spatial axis
//    (keras.utils.conv_utils.convert_kernel) for Conv1D/2D/3D and Conv2DTranspose, as Keras
//    does when loading them into TensorFlow. Keras 1 files do not record their backend.
// 1-D layers run on the 2-D kernels with H = 1; SeparableConv is depthwise + 1x1 Conv2D.
#include "frontend/keras/layers/spatial.hpp"
#include "ops/op_types.hpp"

namespace graft::keras {

namespace {

const Order kOrderTCN{Axis("T"), Axis("C"), Axis("N")};
const Order kOrderDHWCN{Axis("D"), Axis("H"), Axis("W"), Axis("C"), Axis("N")};
const Order kOrderHWNC{Axis("H"), Axis("W"), Axis("N"), Axis("C")};
const Order kOrderDHWNC{Axis("D"), Axis("H"), Axis("W"), Axis("N"), Axis("C")};
const Order kOrderHWCM{Axis("H"), Axis("W"), Axis("C"), Axis("M")};

bool keras1(const LayerContext& ctx) { return ctx.framework_version().rfind("1.", 0) == 0; }

struct ConvConfig {
    std::int64_t filters = 0;
    std::vector<std::int64_t> kernel, strides, dilation;
    std::string padding;
    bool use_bias = true;
    bool cf = false;
    std::string activation;
};

/// Sizes (each 1..kMaxElements) under the first of `keys` present, else `dflt` on every axis.
std::vector<std::int64_t> sizes_or(const Config& c, std::initializer_list<const char*> keys, std::size_t nd, std::int64_t dflt) {
    for (auto* k : keys)
        if (c.has(k)) return c.get_sizes(k, nd);
    return std::vector<std::int64_t>(nd, dflt);
}

ConvConfig read_conv(LayerContext& ctx, std::size_t nd, bool filters = true) {
    const auto& c = ctx.config();
    ConvConfig k;
    if (filters) {
        const auto key = c.first_of({"filters", "nb_filter"});
        if (key.empty()) c.fail("config has no 'filters'");
        k.filters = c.get_size(key.c_str());
    }
    if (c.has("kernel_size")) {
        k.kernel = c.get_sizes("kernel_size", nd);
    } else if (nd == 1 && c.has("filter_length")) {
        k.kernel = {c.get_size("filter_length")};
    } else if (nd == 2 && c.has("nb_row")) {
        k.kernel = {c.get_size("nb_row"), c.get_size("nb_col")};
    } else if (nd == 3 && c.has("kernel_dim1")) {
        k.kernel = {c.get_size("kernel_dim1"), c.get_size("kernel_dim2"), c.get_size("kernel_dim3")};
    } else {
        c.fail("config has no 'kernel_size'");
    }
    k.strides = sizes_or(c, {"strides", "subsample", "subsample_length"}, nd, 1);
    k.dilation = sizes_or(c, {"dilation_rate", "atrous_rate"}, nd, 1);
    k.padding = c.get_string("padding", c.get_string("border_mode", "valid"));
    if (k.padding != "valid" && k.padding != "same" && !(k.padding == "causal" && nd == 1))
        ctx.fail_unsupported("padding '" + k.padding + "'");
    k.use_bias = c.get_bool("use_bias", c.get_bool("bias", true));
    if (c.get_int("groups", 1) != 1) ctx.fail_unsupported("grouped convolutions (groups > 1) are not supported yet");
    k.cf = channels_first(ctx);
    k.activation = c.get_string("activation", "linear");
    return k;
}

/// A weight array with its axes permuted (out axis i = in axis perm[i]).
std::vector<float> permuted(const WeightArray& w, const std::vector<std::size_t>& perm, Shape& shape) {
    const std::size_t r = w.shape.size();
    std::vector<std::int64_t> in_stride(r, 1);
    for (std::size_t i = r - 1; i > 0; --i) in_stride[i - 1] = in_stride[i] * w.shape[i];
    shape.clear();
    for (auto p : perm) shape.push_back(w.shape[p]);
    std::vector<float> out(w.data->size());
    std::vector<std::int64_t> idx(r, 0);
    for (std::size_t o = 0; o < out.size(); ++o) {
        std::int64_t src = 0;
        for (std::size_t i = 0; i < r; ++i) src += idx[i] * in_stride[perm[i]];
        out[o] = (*w.data)[static_cast<std::size_t>(src)];
        for (std::size_t i = r; i-- > 0;) {
            if (++idx[i] < shape[i]) break;
            idx[i] = 0;
        }
    }
    return out;
}

/// keras.utils.conv_utils.convert_kernel: reverse every axis but the last two.
void flip_spatial(std::vector<float>& data, const Shape& shape) {
    const std::size_t r = shape.size();
    const std::int64_t inner = shape[r - 1] * shape[r - 2];
    std::vector<float> src = data;
    std::vector<std::int64_t> idx(r - 2, 0);
    const std::int64_t outer = static_cast<std::int64_t>(data.size()) / std::max<std::int64_t>(inner, 1);
    for (std::int64_t o = 0; o < outer; ++o) {
        std::int64_t flipped = 0;
        for (std::size_t i = 0; i < r - 2; ++i) flipped = flipped * shape[i] + (shape[i] - 1 - idx[i]);
        std::copy_n(src.begin() + flipped * inner, inner, data.begin() + o * inner);
        for (std::size_t i = r - 2; i-- > 0;) {
            if (++idx[i] < shape[i]) break;
            idx[i] = 0;
        }
    }
}

/// The conv kernel (weight `i`) in Keras 2 layout `expected`, from any Keras generation/backend.
/// `flip` says whether Keras converts this class's kernel between backends.
ConstantVariable* kernel(LayerContext& ctx, std::size_t i, const Order& order, const Shape& expected, bool flip) {
    const WeightArray& w = ctx.weight(i);
    const std::size_t nd = expected.size() - 2;
    Shape shape = w.shape;
    std::vector<float> data;
    if (keras1(ctx) && nd == 1 && w.shape.size() == 4) {
        // Convolution1D: (filter_length, 1, input_dim, nb_filter); Keras 1.1: (nb_filter, input_dim, filter_length, 1)
        if (w.shape == Shape{expected[0], 1, expected[1], expected[2]}) {
            data = *w.data;
        } else if (w.shape == Shape{expected[2], expected[1], expected[0], 1}) {
            data = permuted(w, {2, 3, 1, 0}, shape);
        } else {
            ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected " +
                           shape_str({expected[0], 1, expected[1], expected[2]}) + " (Keras 1 Convolution1D)");
        }
        shape = expected;
    } else if (keras1(ctx) && nd >= 2 && channels_first(ctx)) {
        // dim_ordering 'th': (nb_filter, stack, k...) -> (k..., stack, nb_filter)
        if (w.shape.size() != nd + 2)
            ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected rank " + std::to_string(nd + 2));
        std::vector<std::size_t> perm;
        for (std::size_t a = 0; a < nd; ++a) perm.push_back(a + 2);
        perm.push_back(1);
        perm.push_back(0);
        data = permuted(w, perm, shape);
    } else {
        data = *w.data;
    }
    if (shape != expected)
        ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected " + shape_str(expected) +
                       " from the layer's config");
    if (flip && ctx.framework_backend() == "theano") flip_spatial(data, shape);
    return ctx.constant(w.name, order, shape, std::move(data));
}

Shape spatial_kernel_shape(const ConvConfig& k, std::int64_t a, std::int64_t b) {
    Shape s(k.kernel.begin(), k.kernel.end());
    s.push_back(a);
    s.push_back(b);
    return s;
}

/// Attributes for a spatial op; 1-D layers gain a leading unit H dimension.
Attributes conv_attrs(const ConvConfig& k, bool as_2d) {
    Attributes a;
    auto lift = [&](std::vector<std::int64_t> v, std::int64_t one) {
        if (as_2d) v.insert(v.begin(), one);
        return v;
    };
    a.set("strides", lift(k.strides, 1));
    a.set("dilations", lift(k.dilation, 1));
    a.set("padding", k.padding);
    return a;
}

void finish(LayerContext& ctx, Variable* y, bool as_2d, const ConvConfig& k, std::size_t nd) {
    if (as_2d) y = spatial::from_2d(ctx, y);
    ctx.set_outputs({apply_activation(ctx, Value{y, spatial::logical(nd, k.cf)}, k.activation)});
}

void conv(LayerContext& ctx, std::size_t nd) {
    ctx.expect_inputs(1, 1);
    const ConvConfig k = read_conv(ctx, nd);
    ctx.expect_weights(k.use_bias ? 2 : 1);
    const Value x = ctx.relabel(ctx.input(0), spatial::logical(nd, k.cf));
    const std::int64_t cin = x.var->size(Axis::C);
    const Order& order = nd == 1 ? kOrderTCN : nd == 2 ? OrderHWCN : kOrderDHWCN;
    NamedVars ins{{"x", x.var}, {"w", kernel(ctx, 0, order, spatial_kernel_shape(k, cin, k.filters), true)}};
    if (k.use_bias) ins.emplace_back("b", ctx.constant(ctx.weight(1), OrderC, {k.filters}));
    const char* type = nd == 1 ? ops::kConv1D : nd == 2 ? ops::kConv2D : ops::kConv3D;
    finish(ctx, ctx.op(type, std::move(ins), conv_attrs(k, false))->output("y"), false, k, nd);
}

/// The input as NHWC (1-D: H = 1) for the depthwise/transposed 2-D ops.
Variable* input_2d(LayerContext& ctx, const ConvConfig& k, std::size_t nd) {
    const Value x = ctx.relabel(ctx.input(0), spatial::logical(nd, k.cf));
    return nd == 1 ? spatial::to_2d(ctx, x.var) : x.var;
}

/// The depthwise kernel (k..., c_in, multiplier) as HWC[M] (1-D: a unit H).
ConstantVariable* depthwise_kernel(LayerContext& ctx, const WeightArray& w, const ConvConfig& k, std::int64_t cin,
                                   std::int64_t mult) {
    const Shape expected = spatial_kernel_shape(k, cin, mult);
    if (w.shape != expected)
        ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected " + shape_str(expected) +
                       " from the layer's config");
    Shape s = expected;
    if (k.kernel.size() == 1) s.insert(s.begin(), 1);
    return ctx.constant(w.name, kOrderHWCM, s, *w.data);
}

/// What a depthwise and a separable layer start from: the config (`filters` as read_conv; causal
/// padding refused for the `what` convolution), `weights` weights besides the bias, the depth
/// multiplier and the input as NHWC with its channel count.
struct DepthwiseStart {
    ConvConfig k;
    std::int64_t mult = 1;
    Variable* x = nullptr;
    std::int64_t cin = 0;
};

DepthwiseStart depthwise_start(LayerContext& ctx, std::size_t nd, bool filters, const std::string& what,
                               std::size_t weights) {
    ctx.expect_inputs(1, 1);
    DepthwiseStart d;
    d.k = read_conv(ctx, nd, filters);
    if (d.k.padding == "causal") ctx.fail_unsupported("causal padding for a " + what + " convolution");
    ctx.expect_weights(d.k.use_bias ? weights + 1 : weights);
    d.mult = ctx.config().get_size("depth_multiplier", 1, 1);
    d.x = input_2d(ctx, d.k, nd);
    d.cin = d.x->size(Axis::C);
    return d;
}

void depthwise(LayerContext& ctx, std::size_t nd) {
    const auto [k, mult, x, cin] = depthwise_start(ctx, nd, false, "depthwise", 1);
    NamedVars ins{{"x", x}, {"w", depthwise_kernel(ctx, ctx.weight(0), k, cin, mult)}};
    if (k.use_bias) ins.emplace_back("b", ctx.constant(ctx.weight(1), OrderC, {cin * mult}));
    finish(ctx, ctx.op(ops::kDepthwiseConv2D, std::move(ins), conv_attrs(k, nd == 1))->output("y"), nd == 1, k, nd);
}

void separable(LayerContext& ctx, std::size_t nd) {
    const auto [k, mult, x, cin] = depthwise_start(ctx, nd, true, "separable", 2);
    NamedVars dw{{"x", x}, {"w", depthwise_kernel(ctx, ctx.weight(0), k, cin, mult)}};
    Variable* mid = ctx.op(ops::kDepthwiseConv2D, std::move(dw), conv_attrs(k, nd == 1), "depthwise")->output("y");
    const WeightArray& pw = ctx.weight(1);
    Shape pw_shape(nd, 1);
    pw_shape.push_back(cin * mult);
    pw_shape.push_back(k.filters);
    if (pw.shape != pw_shape)
        ctx.fail_shape("weight '" + pw.name + "' has shape " + shape_str(pw.shape) + ", expected " + shape_str(pw_shape));
    NamedVars ins{{"x", mid}, {"w", ctx.constant(pw.name, OrderHWCN, {1, 1, cin * mult, k.filters}, *pw.data)}};
    if (k.use_bias) ins.emplace_back("b", ctx.constant(ctx.weight(2), OrderC, {k.filters}));
    Attributes a;
    a.set("strides", std::vector<std::int64_t>{1, 1});
    a.set("dilations", std::vector<std::int64_t>{1, 1});
    a.set("padding", "valid");
    finish(ctx, ctx.op(ops::kConv2D, std::move(ins), std::move(a), "pointwise")->output("y"), nd == 1, k, nd);
}

void transpose_conv(LayerContext& ctx, std::size_t nd) {
    ctx.expect_inputs(1, 1);
    const ConvConfig k = read_conv(ctx, nd);
    if (k.padding == "causal") ctx.fail_unsupported("causal padding for a transposed convolution");
    ctx.expect_weights(k.use_bias ? 2 : 1);
    Variable* x = input_2d(ctx, k, nd);
    const std::int64_t cin = x->size(Axis::C);
    Attributes a = conv_attrs(k, nd == 1);
    if (ctx.config().has("output_padding")) {
        auto op = ctx.config().get_sizes("output_padding", nd, 0);
        if (nd == 1) op.insert(op.begin(), 0);
        a.set("output_padding", op);
    }
    const Shape keras_shape = spatial_kernel_shape(k, k.filters, cin);
    const Order order = nd == 3 ? kOrderDHWNC : nd == 2 ? kOrderHWNC : Order{Axis::W, Axis::N, Axis::C};
    ConstantVariable* w = kernel(ctx, 0, order, keras_shape, nd == 2);
    if (nd == 1) {  // (k, c_out, c_in) -> (1, k, c_out, c_in), same data
        Shape s = keras_shape;
        s.insert(s.begin(), 1);
        w = ctx.constant(w->name() + "_2d", kOrderHWNC, s, w->data());
    }
    NamedVars ins{{"x", x}, {"w", w}};
    if (k.use_bias) ins.emplace_back("b", ctx.constant(ctx.weight(1), OrderC, {k.filters}));
    finish(ctx, ctx.op(nd == 3 ? ops::kConvTranspose3D : ops::kConvTranspose2D, std::move(ins), std::move(a))->output("y"), nd == 1, k,
           nd);
}

}  // namespace

void register_conv(Registry& r) {
    for (std::size_t nd : {1, 2, 3}) {
        const std::string d = std::to_string(nd) + "D";
        r.add_converter("keras", "Conv" + d, [nd](LayerContext& c) { conv(c, nd); });
        r.add_converter("keras", "Convolution" + d, [nd](LayerContext& c) { conv(c, nd); });
        r.add_converter("keras", "Conv" + d + "Transpose", [nd](LayerContext& c) { transpose_conv(c, nd); });
        r.add_converter("keras", "Convolution" + d + "Transpose", [nd](LayerContext& c) { transpose_conv(c, nd); });
        if (nd < 3) {
            r.add_converter("keras", "DepthwiseConv" + d, [nd](LayerContext& c) { depthwise(c, nd); });
            r.add_converter("keras", "SeparableConv" + d, [nd](LayerContext& c) { separable(c, nd); });
            r.add_converter("keras", "SeparableConvolution" + d, [nd](LayerContext& c) { separable(c, nd); });
            r.add_converter("keras", "AtrousConvolution" + d, [nd](LayerContext& c) { conv(c, nd); });
        }
    }
}

}  // namespace graft::keras
