// Keras LocallyConnected1D and LocallyConnected2D (tf.keras 2.x, Keras 1.2) as graft's
// LocallyConnected2D (1-D: H = 1). Every `implementation` stores the kernel differently
// (keras/layers/locally_connected/*.py, keras/utils/conv_utils.py); all are brought to one kernel
// per output position, [oh, ow, kh, kw, c_in, c_out], taps outside the input zero:
//  - 1 (and Keras 1.2's LocallyConnected): (positions, taps * c_in, c_out); a tap's features are
//    the input window flattened as stored: channels_last (kh, kw, c_in), channels_first
//    (c_in, kh, kw). Padding valid only.
//  - 2: a dense kernel masked to the windows: channels_last (h, w, c_in, oh, ow, c_out),
//    channels_first (c_in, h, w, c_out, oh, ow) (1-D: without h and oh).
//  - 3: the windows' weights alone, in the order of Keras' sorted (output index, input index)
//    pairs over the flattened output (positions, c_out) / input (h, w, c_in); channels_first
//    flattens (c_out, positions) / (c_in, h, w).
// Windows: valid starts output i at input i * stride; same gives ceil(in / stride) outputs and
// starts output i at i * stride - kernel / 2 (conv_utils.conv_connected_inputs, not TF's padding).
// The bias is (positions..., c_out); channels_first adds it reshaped, not transposed, to
// (c_out, positions...) (keras.backend.bias_add), and so does graft.
#include "frontend/keras/layers/spatial.hpp"
#include "ops/op_types.hpp"

namespace graft::keras {

namespace {

using i64 = std::int64_t;

const Order kOrderLocalW{Axis("OH"), Axis("OW"), Axis::H, Axis::W, Axis::C, Axis::N};
const Order kOrderLocalB{Axis("OH"), Axis("OW"), Axis::C};

/// The layer's config and its geometry as 2-D (1-D: unit H, kernel height and output height).
struct Local {
    std::size_t nd = 2;
    i64 filters = 0, cin = 0;
    int implementation = 1;
    bool same = false, use_bias = true, cf = false;
    std::string activation;
    i64 in[2] = {1, 1}, k[2] = {1, 1}, s[2] = {1, 1}, pad[2] = {0, 0}, out[2] = {1, 1};

    i64 positions() const { return out[0] * out[1]; }
    /// The kernel's index of (output position, tap, input channel, output channel).
    i64 at(i64 pos, i64 a, i64 b, i64 c, i64 f) const { return (((pos * k[0] + a) * k[1] + b) * cin + c) * filters + f; }
    /// The input row / column tap a / b of output row / column o reads; outside the input: -1.
    i64 src(int axis, i64 o, i64 t) const {
        const i64 i = o * s[axis] - pad[axis] + t;
        return i >= 0 && i < in[axis] ? i : -1;
    }
};

/// Sizes of `nd` axes under the first of `keys`, else 1 on every axis.
std::vector<i64> sizes_or_one(const Config& c, std::initializer_list<const char*> keys, std::size_t nd) {
    for (auto* key : keys)
        if (c.has(key)) return c.get_sizes(key, nd);
    return std::vector<i64>(nd, 1);
}

Local read_local(LayerContext& ctx, std::size_t nd, const Value& x) {
    const Config& c = ctx.config();
    Local l;
    l.nd = nd;
    const std::string fkey = c.first_of({"filters", "nb_filter"});
    if (fkey.empty()) c.fail("config has no 'filters'");
    l.filters = c.get_size(fkey.c_str());
    std::vector<i64> kernel;
    if (c.has("kernel_size"))
        kernel = c.get_sizes("kernel_size", nd);
    else if (nd == 1 && c.has("filter_length"))
        kernel = {c.get_size("filter_length")};
    else if (nd == 2 && c.has("nb_row"))
        kernel = {c.get_size("nb_row"), c.get_size("nb_col")};
    else
        c.fail("config has no 'kernel_size'");
    const std::vector<i64> strides = sizes_or_one(c, {"strides", "subsample", "subsample_length"}, nd);
    const std::string padding = c.get_string("padding", c.get_string("border_mode", "valid"));
    if (padding != "valid" && padding != "same") ctx.fail_unsupported("padding '" + padding + "' (Keras has valid and same)");
    l.same = padding == "same";
    const i64 impl = c.get_int("implementation", 1);
    if (impl < 1 || impl > 3) ctx.fail_unsupported("implementation " + std::to_string(impl) + " (Keras has 1, 2 and 3)");
    l.implementation = static_cast<int>(impl);
    if (l.same && l.implementation == 1)
        ctx.fail_format("padding 'same' with implementation 1 (Keras allows only valid padding there)");
    l.use_bias = c.get_bool("use_bias", c.get_bool("bias", true));
    l.cf = channels_first(ctx);
    l.activation = c.get_string("activation", "linear");

    const std::vector<Axis> axes = spatial::axes(nd);
    l.cin = x.var->size(Axis::C);
    if (l.cin == kDynamic) ctx.fail_shape("the input's channels have no fixed size");
    for (std::size_t i = 0; i < nd; ++i) {
        const int a = static_cast<int>(2 - nd + i);
        l.in[a] = x.var->size(axes[i]);
        if (l.in[a] == kDynamic)
            ctx.fail_shape("the input's spatial sizes must be fixed (Keras requires it for locally connected layers)");
        l.k[a] = kernel[i], l.s[a] = strides[i];
        if (l.same) {
            l.out[a] = (l.in[a] - 1) / l.s[a] + 1;
            l.pad[a] = l.k[a] / 2;
        } else {
            if (l.in[a] < l.k[a])
                ctx.fail_shape("input size " + std::to_string(l.in[a]) + " is smaller than the kernel size " +
                               std::to_string(l.k[a]) + " (valid padding)");
            l.out[a] = (l.in[a] - l.k[a]) / l.s[a] + 1;
        }
    }
    checked::product(ctx.where(), "kernel", {l.positions(), l.k[0], l.k[1], l.cin, l.filters});
    if (l.implementation == 2)  // the dense kernel's index arithmetic
        checked::product(ctx.where(), "kernel", {l.in[0], l.in[1], l.cin, l.positions(), l.filters});
    return l;
}

/// Keras' kernel shape for the layer's implementation (1-D: without the unit axes); `count` is
/// implementation 3's number of weights.
Shape keras_kernel_shape(const Local& l, i64 count) {
    const bool one = l.nd == 1;
    if (l.implementation == 1) return {l.positions(), l.k[0] * l.k[1] * l.cin, l.filters};
    if (l.implementation == 3) return {count};
    if (l.cf)
        return one ? Shape{l.cin, l.in[1], l.filters, l.out[1]}
                   : Shape{l.cin, l.in[0], l.in[1], l.filters, l.out[0], l.out[1]};
    return one ? Shape{l.in[1], l.cin, l.out[1], l.filters} : Shape{l.in[0], l.in[1], l.cin, l.out[0], l.out[1], l.filters};
}

/// The number of input positions the window of output `pos` covers.
i64 window_taps(const Local& l, i64 pos) {
    i64 n[2] = {0, 0};
    const i64 o[2] = {pos / l.out[1], pos % l.out[1]};
    for (int a = 0; a < 2; ++a)
        for (i64 t = 0; t < l.k[a]; ++t) n[a] += l.src(a, o[a], t) >= 0;
    return n[0] * n[1];
}

/// The kernel of every output position, [oh, ow, kh, kw, c_in, c_out], from Keras' weight `w`.
std::vector<float> local_kernel(LayerContext& ctx, const Local& l, const WeightArray& w) {
    i64 count = 0;  // implementation 3: one weight per (window tap, c_in, c_out)
    for (i64 pos = 0; pos < l.positions(); ++pos) count += window_taps(l, pos) * l.cin * l.filters;
    const Shape expected = keras_kernel_shape(l, count);
    if (w.shape != expected)
        ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected " + shape_str(expected) +
                       " (implementation " + std::to_string(l.implementation) + ", from the layer's config and input)");
    const std::vector<float>& src = *w.data;
    std::vector<float> out(static_cast<std::size_t>(l.positions() * l.k[0] * l.k[1] * l.cin * l.filters), 0.f);
    auto put = [&](i64 to, i64 from) { out[static_cast<std::size_t>(to)] = src[static_cast<std::size_t>(from)]; };
    const i64 H = l.in[0], W = l.in[1], OH = l.out[0], OW = l.out[1], C = l.cin, F = l.filters;
    if (l.implementation == 3) {
        // Sorted (output index, input index) pairs: channels_last by position, c_out, then input
        // row, column, c_in; channels_first by c_out, position, then c_in, input row, column.
        i64 next = 0;
        auto window = [&](i64 pos, i64 f) {
            const i64 oy = pos / OW, ox = pos % OW;
            auto tap = [&](i64 a, i64 b, i64 c) {
                if (l.src(0, oy, a) >= 0 && l.src(1, ox, b) >= 0) put(l.at(pos, a, b, c, f), next++);
            };
            if (l.cf) {
                for (i64 c = 0; c < C; ++c)
                    for (i64 a = 0; a < l.k[0]; ++a)
                        for (i64 b = 0; b < l.k[1]; ++b) tap(a, b, c);
            } else {
                for (i64 a = 0; a < l.k[0]; ++a)
                    for (i64 b = 0; b < l.k[1]; ++b)
                        for (i64 c = 0; c < C; ++c) tap(a, b, c);
            }
        };
        if (l.cf) {
            for (i64 f = 0; f < F; ++f)
                for (i64 pos = 0; pos < l.positions(); ++pos) window(pos, f);
        } else {
            for (i64 pos = 0; pos < l.positions(); ++pos)
                for (i64 f = 0; f < F; ++f) window(pos, f);
        }
        return out;
    }
    for (i64 pos = 0; pos < l.positions(); ++pos) {
        const i64 oy = pos / OW, ox = pos % OW;
        for (i64 a = 0; a < l.k[0]; ++a)
            for (i64 b = 0; b < l.k[1]; ++b) {
                const i64 iy = l.src(0, oy, a), ix = l.src(1, ox, b);
                if (iy < 0 || ix < 0) continue;
                for (i64 c = 0; c < C; ++c)
                    for (i64 f = 0; f < F; ++f) {
                        i64 from;
                        if (l.implementation == 1) {
                            const i64 feature = l.cf ? (c * l.k[0] + a) * l.k[1] + b : (a * l.k[1] + b) * C + c;
                            from = (pos * l.k[0] * l.k[1] * C + feature) * F + f;
                        } else if (l.cf) {
                            from = ((((c * H + iy) * W + ix) * F + f) * OH + oy) * OW + ox;
                        } else {
                            from = ((((iy * W + ix) * C + c) * OH + oy) * OW + ox) * F + f;
                        }
                        put(l.at(pos, a, b, c, f), from);
                    }
            }
    }
    return out;
}

/// The bias [oh, ow, c_out] from Keras' (positions..., c_out), reshaped for channels_first.
ConstantVariable* local_bias(LayerContext& ctx, const Local& l, const WeightArray& w) {
    const Shape expected = l.nd == 1 ? Shape{l.out[1], l.filters} : Shape{l.out[0], l.out[1], l.filters};
    if (w.shape != expected)
        ctx.fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected " + shape_str(expected) +
                       " from the layer's config and input");
    std::vector<float> b = *w.data;
    if (l.cf)  // keras.backend.bias_add: the bias's memory read as (c_out, positions)
        for (i64 pos = 0; pos < l.positions(); ++pos)
            for (i64 f = 0; f < l.filters; ++f)
                b[static_cast<std::size_t>(pos * l.filters + f)] = (*w.data)[static_cast<std::size_t>(f * l.positions() + pos)];
    return ctx.constant(w.name, kOrderLocalB, {l.out[0], l.out[1], l.filters}, std::move(b));
}

void locally_connected(LayerContext& ctx, std::size_t nd) {
    ctx.expect_inputs(1, 1);
    const bool cf = channels_first(ctx);
    const Value x = ctx.relabel(ctx.input(0), spatial::logical(nd, cf));
    const Local l = read_local(ctx, nd, x);
    ctx.expect_weights(l.use_bias ? 2 : 1);
    const WeightArray& kw = ctx.weight(0);
    NamedVars ins{{"x", nd == 1 ? spatial::to_2d(ctx, x.var) : x.var},
                  {"w", ctx.constant(kw.name, kOrderLocalW, {l.out[0], l.out[1], l.k[0], l.k[1], l.cin, l.filters},
                                     local_kernel(ctx, l, kw))}};
    if (l.use_bias) ins.emplace_back("b", local_bias(ctx, l, ctx.weight(1)));
    Attributes a;
    a.set("strides", std::vector<i64>{l.s[0], l.s[1]});
    a.set("pads", std::vector<i64>{l.pad[0], l.pad[1]});
    Variable* y = ctx.op(ops::kLocallyConnected2D, std::move(ins), std::move(a))->output("y");
    if (nd == 1) y = spatial::from_2d(ctx, y);
    ctx.set_outputs({apply_activation(ctx, Value{y, spatial::logical(nd, l.cf)}, l.activation)});
}

}  // namespace

void register_local(Registry& r) {
    r.add_converter("keras", "LocallyConnected1D", [](LayerContext& c) { locally_connected(c, 1); });
    r.add_converter("keras", "LocallyConnected2D", [](LayerContext& c) { locally_connected(c, 2); });
}

}  // namespace graft::keras
