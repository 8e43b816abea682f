// Conformance examples: Conv3D, the transposed convolutions (ConvTranspose2D, ConvTranspose3D),
// LocallyConnected2D and BatchMatMul.
//
// The convolutions follow Keras on TensorFlow: a forward convolution pads like tf.nn.conv
// ("same": ceil(in / stride) outputs, the padding split with the odd one after); a transposed one
// has Keras' deconv_output_length outputs and TF's conv_transpose padding (the padding of the
// forward convolution from that output size back to the input size), every output summing
// x[i] * w[k] over the taps with i * stride - pad + k * dilation == o.
#include <algorithm>
#include <cmath>

#include "reference.hpp"

namespace conformance {

namespace {

/// One spatial dimension of a convolution: input size, kernel size, stride, dilation and (for a
/// transposed convolution) output_padding, -1 for none.
struct Dim {
    const char* axis;
    std::int64_t in, k, s = 1, d = 1, out_pad = -1;
    std::int64_t reach() const { return (k - 1) * d + 1; }
};

/// Output size and padding before the first input of one dimension.
struct Span {
    std::int64_t out, pad;
};

/// TF's forward convolution.
Span forward_span(const Dim& a, bool same) {
    if (!same) return {(a.in - a.reach()) / a.s + 1, 0};
    const std::int64_t out = (a.in + a.s - 1) / a.s;
    return {out, std::max<std::int64_t>((out - 1) * a.s + a.reach() - a.in, 0) / 2};
}

/// Keras' deconv_output_length, then the padding tf.nn.conv_transpose derives from that size.
Span transpose_span(const Dim& a, bool same) {
    std::int64_t out;
    if (a.out_pad < 0)
        out = same ? a.in * a.s : a.in * a.s + std::max<std::int64_t>(a.reach() - a.s, 0);
    else
        out = (a.in - 1) * a.s + a.reach() - 2 * (same ? a.reach() / 2 : 0) + a.out_pad;
    return {out, same ? std::max<std::int64_t>((a.in - 1) * a.s + a.reach() - out, 0) / 2 : 0};
}

struct ConvSpec {
    const char* name;
    std::int64_t n;
    std::vector<Dim> dims;  // the spatial dimensions, in the input's order (D,) H, W
    std::int64_t cin, cout;
    bool same, bias, relu;
};

/// A Conv3D (transpose = false; 3 dims) or ConvTranspose2D/3D example. Kernels are Keras':
/// Conv3D (kd, kh, kw, c_in, c_out) as DHWCN, transposed (k..., c_out, c_in) as (D)HWNC.
Example conv(const std::string& type, const ConvSpec& cs, bool transpose, unsigned seed) {
    Example e;
    e.op_type = type;
    e.name = cs.name;
    const bool three = cs.dims.size() == 3;
    std::vector<std::int64_t> strides, dilations, out_pad;
    Shape xs{cs.n}, ws;
    std::vector<Axis> w_axes;
    for (const Dim& a : cs.dims) {
        strides.push_back(a.s);
        dilations.push_back(a.d);
        out_pad.push_back(a.out_pad);
        xs.push_back(a.in);
        ws.push_back(a.k);
        w_axes.emplace_back(a.axis);
    }
    xs.push_back(cs.cin);
    ws.push_back(transpose ? cs.cout : cs.cin);
    ws.push_back(transpose ? cs.cin : cs.cout);
    w_axes.push_back(transpose ? Axis::N : Axis::C);
    w_axes.push_back(transpose ? Axis::C : Axis::N);
    e.attrs.set("strides", strides);
    e.attrs.set("dilations", dilations);
    e.attrs.set("padding", cs.same ? "same" : "valid");
    if (std::any_of(out_pad.begin(), out_pad.end(), [](std::int64_t v) { return v >= 0; })) e.attrs.set("output_padding", out_pad);
    if (cs.relu) e.attrs.set("activation", "relu");
    const Order xo = three ? OrderNDHWC : OrderNHWC;
    e.inputs = {input("x", xo, xs, seed), input("w", Order(w_axes), ws, seed + 1, true, -1.f, 1.f)};
    if (cs.bias) e.inputs.push_back(input("b", OrderC, {cs.cout}, seed + 2, true));
    e.reference = [cs, transpose, xo](const std::vector<Operand>& in) {
        const Operand &x = in[0], &w = in[1];
        const std::size_t nd = cs.dims.size();
        std::vector<Span> span;
        Shape ys{cs.n};
        std::int64_t taps = 1;
        for (const Dim& a : cs.dims) {
            span.push_back(transpose ? transpose_span(a, cs.same) : forward_span(a, cs.same));
            ys.push_back(span.back().out);
            taps *= a.k;
        }
        ys.push_back(cs.cout);
        return std::vector<Expected>{output("y", xo, ys, [&](const Pos& p, std::int64_t) {
            const std::int64_t co = p.at("C");
            double acc = cs.bias ? at(in[2], Pos{{"C", co}}) : 0.0;
            for (std::int64_t tap = 0; tap < taps; ++tap) {  // the kernel's taps, row-major
                Pos q{{"N", p.at("N")}};
                bool inside = true;
                for (std::size_t i = nd, rest = static_cast<std::size_t>(tap); i-- > 0;) {
                    const Dim& a = cs.dims[i];
                    const auto k = static_cast<std::int64_t>(rest % static_cast<std::size_t>(a.k));
                    rest /= static_cast<std::size_t>(a.k);
                    const std::int64_t o = p.at(a.axis);
                    std::int64_t src;
                    if (transpose) {  // o == src * stride - pad + k * dilation
                        const std::int64_t t = o + span[i].pad - k * a.d;
                        inside = inside && t >= 0 && t % a.s == 0;
                        src = t / a.s;
                    } else {
                        src = o * a.s - span[i].pad + k * a.d;
                    }
                    inside = inside && src >= 0 && src < a.in;
                    q[a.axis] = src;
                }
                if (!inside) continue;
                for (std::int64_t ci = 0; ci < cs.cin; ++ci) {
                    q["C"] = ci;
                    const std::int64_t wi = transpose ? (tap * cs.cout + co) * cs.cin + ci : (tap * cs.cin + ci) * cs.cout + co;
                    acc += at(x, q) * w.data[static_cast<std::size_t>(wi)];
                }
            }
            return cs.relu ? std::max(acc, 0.0) : acc;
        })};
    };
    return e;
}

/// LocallyConnected2D: y[n, i, j, f] = b[i, j, f] + the sum over taps (a, b) and input channels c
/// of x[n, i * sh - ph + a, j * sw - pw + b, c] * w[i, j, a, b, c, f], taps outside x left out.
/// `h`, `w`: input size, kernel size, stride, pad (Dim's d field is the pad here).
Example local(const std::string& name, std::int64_t n, Dim h, Dim w, std::int64_t cin, std::int64_t cout, bool bias,
              unsigned seed) {
    Example e;
    e.op_type = "LocallyConnected2D";
    e.name = name;
    const std::int64_t oh = (h.in + 2 * h.d - h.k) / h.s + 1, ow = (w.in + 2 * w.d - w.k) / w.s + 1;
    e.attrs.set("strides", std::vector<std::int64_t>{h.s, w.s});
    e.attrs.set("pads", std::vector<std::int64_t>{h.d, w.d});
    const Order wo{Axis("OH"), Axis("OW"), Axis::H, Axis::W, Axis::C, Axis::N};
    e.inputs = {input("x", OrderNHWC, {n, h.in, w.in, cin}, seed),
                input("w", wo, {oh, ow, h.k, w.k, cin, cout}, seed + 1, true, -1.f, 1.f)};
    if (bias) e.inputs.push_back(input("b", Order{Axis("OH"), Axis("OW"), Axis::C}, {oh, ow, cout}, seed + 2, true));
    e.reference = [=](const std::vector<Operand>& in) {
        return std::vector<Expected>{output("y", OrderNHWC, {n, oh, ow, cout}, [&](const Pos& p, std::int64_t) {
            const std::int64_t i = p.at("H"), j = p.at("W"), f = p.at("C");
            double acc = bias ? at(in[2], Pos{{"OH", i}, {"OW", j}, {"C", f}}) : 0.0;
            for (std::int64_t a = 0; a < h.k; ++a)
                for (std::int64_t b = 0; b < w.k; ++b) {
                    const std::int64_t y = i * h.s - h.d + a, x = j * w.s - w.d + b;
                    if (y < 0 || y >= h.in || x < 0 || x >= w.in) continue;
                    for (std::int64_t c = 0; c < cin; ++c)
                        acc += at(in[0], Pos{{"N", p.at("N")}, {"H", y}, {"W", x}, {"C", c}}) *
                               at(in[1], Pos{{"OH", i}, {"OW", j}, {"H", a}, {"W", b}, {"C", c}, {"N", f}});
                }
            return acc;
        })};
    };
    return e;
}

/// BatchMatMul: per item of N, x's axis `xk` contracted with y's axis `yk`; the result's axes are
/// N, x's other axes, then y's other axes (Keras batch_dot), named by out_order. "x's other axes"
/// are x's axes as the example lists them: which axis of x becomes which axis of the result must
/// not depend on the memory order x arrives in (the permuted variant).
Example matmul(const std::string& name, Order xo, Shape xs, Axis xk, Order yo, Shape ys, Axis yk, Order out, unsigned seed) {
    Example e;
    e.op_type = "BatchMatMul";
    e.name = name;
    e.attrs.set("batch", Axis::N);
    e.attrs.set("x_axis", xk);
    e.attrs.set("y_axis", yk);
    e.attrs.set("out_order", out);
    for (const auto& [key, o, k] : {std::make_tuple("x_free", xo, xk), std::make_tuple("y_free", yo, yk)}) {
        std::vector<std::string> names;
        for (const auto& a : o.axes())
            if (a != Axis::N && a != k) names.push_back(a.name());
        e.attrs.set(key, names);
    }
    e.inputs = {input("x", xo, xs, seed), input("y", yo, ys, seed + 1)};
    e.reference = [=](const std::vector<Operand>& in) {
        const Operand &x = in[0], &y = in[1];
        std::vector<std::pair<std::string, std::string>> from;  // (output axis, the input axis it is)
        Shape shape;
        std::vector<const Operand*> owner;
        for (const Operand* o : {&x, &y})
            for (std::size_t i = 0; i < o->order.ndim(); ++i) {
                const Axis a = o->order[i];
                if (a == (o == &x ? xk : yk) || (a == Axis::N && o == &y)) continue;
                from.emplace_back(out[from.size()].name(), a.name());
                shape.push_back(o->shape[i]);
                owner.push_back(o);
            }
        const std::int64_t K = x.shape[x.order.index(xk)];
        return std::vector<Expected>{output("y", out, shape, [&](const Pos& p, std::int64_t) {
            Pos px, py;
            for (std::size_t i = 0; i < from.size(); ++i) {
                if (owner[i] == &x || from[i].second == "N") px[from[i].second] = p.at(from[i].first);
                if (owner[i] == &y || from[i].second == "N") py[from[i].second] = p.at(from[i].first);
            }
            double acc = 0;
            for (std::int64_t k = 0; k < K; ++k) {
                px[xk.name()] = k, py[yk.name()] = k;
                acc += at(x, px) * at(y, py);
            }
            return acc;
        })};
    };
    return e;
}

}  // namespace

std::vector<Example> conv_more_examples() {
    std::vector<Example> v;
    Seeds next(200, 3);

    for (const ConvSpec& cs :
         {ConvSpec{"3x3x3 same, bias, relu", 2, {{"D", 4, 3}, {"H", 4, 3}, {"W", 3, 3}}, 2, 3, true, true, true},
          ConvSpec{"2x3x2 valid, strides 2,1,2, dilation 1,2,1", 1, {{"D", 5, 2, 2}, {"H", 6, 3, 1, 2}, {"W", 5, 2, 2}}, 2, 4, false, true, false},
          ConvSpec{"2x2x2 same, strides 2 (the odd padding after)", 1, {{"D", 5, 2, 2}, {"H", 4, 2, 2}, {"W", 3, 2, 2}}, 3, 2, true, false, false}})
        v.push_back(conv("Conv3D", cs, false, next()));

    for (const ConvSpec& cs :
         {ConvSpec{"3x3 same, strides 2, bias", 2, {{"H", 3, 3, 2}, {"W", 3, 3, 2}}, 2, 4, true, true, false},
          ConvSpec{"3x2 valid, strides 2x1", 1, {{"H", 3, 3, 2}, {"W", 4, 2}}, 3, 2, false, false, false},
          ConvSpec{"2x1 valid, strides 3x2 (outputs no tap reaches: bias only)", 1, {{"H", 2, 2, 3}, {"W", 3, 1, 2}}, 2, 3, false, true, false},
          ConvSpec{"5x4 same, strides 2x3 (uneven padding)", 1, {{"H", 3, 5, 2}, {"W", 2, 4, 3}}, 2, 2, true, true, false},
          ConvSpec{"3x3 same, strides 2, output_padding 1x0, relu", 1, {{"H", 3, 3, 2, 1, 1}, {"W", 3, 3, 2, 1, 0}}, 2, 3, true, true, true},
          ConvSpec{"3x3 valid, strides 2, dilations 2x1, output_padding 1x1", 1, {{"H", 3, 3, 2, 2, 1}, {"W", 3, 3, 2, 1, 1}}, 2, 3, false, true, false}})
        v.push_back(conv("ConvTranspose2D", cs, true, next()));

    for (const ConvSpec& cs :
         {ConvSpec{"3x3x3 same, strides 2,1,2, bias, relu", 1, {{"D", 2, 3, 2}, {"H", 3, 3}, {"W", 2, 3, 2}}, 2, 3, true, true, true},
          ConvSpec{"2x3x2 valid, strides 1,2,2, dilations 2,1,1, output_padding 0,1,1", 2,
                   {{"D", 2, 2, 1, 2, 0}, {"H", 2, 3, 2, 1, 1}, {"W", 3, 2, 2, 1, 1}}, 2, 2, false, true, false},
          ConvSpec{"2x3x2 same, strides 2, output_padding 1,0,1", 1, {{"D", 2, 2, 2, 1, 1}, {"H", 2, 3, 2, 1, 0}, {"W", 3, 2, 2, 1, 1}}, 2, 2, true, false, false}})
        v.push_back(conv("ConvTranspose3D", cs, true, next()));

    // Dim{axis, input size, kernel size, stride, pad}
    v.push_back(local("3x3 valid, bias", 2, {"H", 4, 3, 1, 0}, {"W", 5, 3, 1, 0}, 3, 2, true, next()));
    v.push_back(local("2x3, strides 2x1, pads 1x1 (Keras same: taps outside)", 1, {"H", 5, 2, 2, 1}, {"W", 4, 3, 1, 1}, 2,
                      3, false, next()));
    v.push_back(local("1x3 on a height of 1, strides 1x2, pads 0x1, bias", 3, {"H", 1, 1, 1, 0}, {"W", 6, 3, 2, 1}, 2, 4,
                      true, next()));
    const graft::Order nwc{Axis::N, Axis::W, Axis::C}, ncw{Axis::N, Axis::C, Axis::W}, nct{Axis::N, Axis::C, Axis::T};
    v.push_back(matmul("NTC . NWC over C (Keras Dot, axes 2 and 2)", graft::OrderNTC, {2, 3, 4}, Axis::C, nwc, {2, 5, 4}, Axis::C,
                       graft::Order{Axis::N, Axis::T, Axis::W}, next()));
    v.push_back(matmul("NC . NCW over C", graft::OrderNC, {3, 4}, Axis::C, ncw, {3, 4, 2}, Axis::C, graft::OrderNC, next()));
    v.push_back(matmul("NTC . NTC over T, result named N, H, W", graft::OrderNTC, {2, 4, 3}, Axis::T, graft::OrderNTC, {2, 4, 2},
                       Axis::T, graft::Order{Axis::N, Axis::H, Axis::W}, next()));
    // H and W of one size: were the result's axes to follow x's memory order rather than its axes,
    // the permuted variant would differ in values, not in shape (which would stop the test case).
    v.push_back(matmul("NHWC . NCT over C (two free axes of x)", OrderNHWC, {2, 3, 3, 4}, Axis::C, nct, {2, 4, 2}, Axis::C,
                       graft::Order{Axis::N, Axis::H, Axis::W, Axis::T}, next()));
    return v;
}

}  // namespace conformance
