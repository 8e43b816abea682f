// Conformance examples: Linear and the convolutions.
#include <algorithm>
#include <cmath>

#include "reference.hpp"

namespace conformance {

namespace {

double relu(double v) { return std::max(v, 0.0); }

/// A 2-D convolution over NHWC in double (TF/Keras padding; 1-D is H = 1). Kernel value of tap
/// (kh, kw), input channel ci, output channel co from `w(kh, kw, ci, co)`.
template <class W>
Expected conv2d(const Operand& x, std::int64_t H, std::int64_t Wd, std::int64_t cin, std::int64_t cout, std::int64_t kh,
                std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t dh, std::int64_t dw, bool same, W w,
                const Operand* b, bool with_relu, const std::string& h_axis, const std::string& w_axis, Order out_order,
                std::int64_t groups_mult = 0) {
    auto span = [&](std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d) -> std::pair<std::int64_t, std::int64_t> {
        const std::int64_t reach = (k - 1) * d + 1;
        if (!same) return {(in - reach) / s + 1, 0};
        const std::int64_t out = (in + s - 1) / s;
        return {out, std::max<std::int64_t>((out - 1) * s + reach - in, 0) / 2};
    };
    const auto [oh, pt] = span(H, kh, sh, dh);
    const auto [ow, pl] = span(Wd, kw, sw, dw);
    const std::int64_t N = x.shape[x.order.index(Axis::N)];
    const std::int64_t outc = groups_mult ? cin * groups_mult : cout;
    Shape shape = h_axis.empty() ? Shape{N, ow, outc} : Shape{N, oh, ow, outc};
    return output("y", out_order, shape, [&](const Pos& p, std::int64_t) {
        const std::int64_t co = p.at("C"), i = h_axis.empty() ? 0 : p.at(h_axis), j = p.at(w_axis);
        double acc = b ? at(*b, Pos{{"C", co}}) : 0.0;
        for (std::int64_t a = 0; a < kh; ++a)
            for (std::int64_t c = 0; c < kw; ++c) {
                const std::int64_t hi = i * sh - pt + a * dh, wi = j * sw - pl + c * dw;
                if (hi < 0 || hi >= H || wi < 0 || wi >= Wd) continue;
                Pos q{{"N", p.at("N")}, {w_axis, wi}};
                if (!h_axis.empty()) q[h_axis] = hi;
                if (groups_mult) {  // depthwise: output channel ci * M + m reads input channel ci
                    q["C"] = co / groups_mult;
                    acc += at(x, q) * w(a, c, co / groups_mult, co % groups_mult);
                } else {
                    for (std::int64_t ci = 0; ci < cin; ++ci) {
                        q["C"] = ci;
                        acc += at(x, q) * w(a, c, ci, co);
                    }
                }
            }
        return with_relu ? relu(acc) : acc;
    });
}

}  // namespace

std::vector<Example> linear_conv_examples() {
    std::vector<Example> v;

    for (bool act : {false, true}) {
        Example lin;
        lin.op_type = "Linear";
        lin.name = act ? "over C of NTC, bias, relu" : "over C of NC, no bias";
        lin.attrs.set("axis", Axis::C);
        if (act) lin.attrs.set("activation", "relu");
        if (act)
            lin.inputs = {input("x", OrderNTC, {2, 3, 5}, 40), input("w", graft::OrderCN, {5, 7}, 41, true), input("b", OrderC, {7}, 42, true)};
        else
            lin.inputs = {input("x", graft::OrderNC, {3, 17}, 40), input("w", graft::OrderCN, {17, 33}, 41, true)};
        lin.reference = [act](const std::vector<Operand>& in) {
            const Operand &x = in[0], &w = in[1];
            const std::int64_t K = w.shape[0], U = w.shape[1];
            Shape s = x.shape;
            s.back() = U;
            return std::vector<Expected>{output("y", x.order, s, [&](const Pos& p, std::int64_t) {
                double acc = act ? in[2].data[static_cast<std::size_t>(p.at("C"))] : 0.0;
                Pos q = p;
                for (std::int64_t k = 0; k < K; ++k) q["C"] = k, acc += at(x, q) * w.data[static_cast<std::size_t>(k * U + p.at("C"))];
                return act ? relu(acc) : acc;
            })};
        };
        v.push_back(lin);
    }

    struct ConvCase {
        const char* name;
        Shape x;
        std::int64_t kh, kw, cout, sh, sw, dh, dw;
        bool same, bias, act;
    };
    for (const ConvCase& cc : {ConvCase{"3x3 same, bias, relu", {2, 6, 5, 3}, 3, 3, 4, 1, 1, 1, 1, true, true, true},
                               ConvCase{"3x2 valid, stride 2x1", {1, 7, 6, 2}, 3, 2, 5, 2, 1, 1, 1, false, true, false},
                               ConvCase{"3x3 same, dilation 2, stride 2", {1, 9, 8, 3}, 3, 3, 2, 2, 2, 2, 2, true, false, false},
                               ConvCase{"1x1", {2, 3, 3, 6}, 1, 1, 4, 1, 1, 1, 1, false, true, false}}) {
        Example e;
        e.op_type = "Conv2D";
        e.name = cc.name;
        e.attrs.set("strides", std::vector<std::int64_t>{cc.sh, cc.sw});
        e.attrs.set("dilations", std::vector<std::int64_t>{cc.dh, cc.dw});
        e.attrs.set("padding", cc.same ? "same" : "valid");
        if (cc.act) e.attrs.set("activation", "relu");
        const std::int64_t cin = cc.x[3];
        e.inputs = {input("x", OrderNHWC, cc.x, 43), input("w", graft::OrderHWCN, {cc.kh, cc.kw, cin, cc.cout}, 44, true)};
        if (cc.bias) e.inputs.push_back(input("b", OrderC, {cc.cout}, 45, true));
        e.reference = [cc, cin](const std::vector<Operand>& in) {
            const Operand& w = in[1];
            auto wt = [&](std::int64_t a, std::int64_t c, std::int64_t ci, std::int64_t co) {
                return static_cast<double>(w.data[static_cast<std::size_t>(((a * cc.kw + c) * cin + ci) * cc.cout + co)]);
            };
            return std::vector<Expected>{conv2d(in[0], cc.x[1], cc.x[2], cin, cc.cout, cc.kh, cc.kw, cc.sh, cc.sw, cc.dh, cc.dw,
                                                cc.same, wt, cc.bias ? &in[2] : nullptr, cc.act, "H", "W", OrderNHWC)};
        };
        v.push_back(e);
    }

    for (const char* padding : {"same", "causal"}) {
        Example e;
        e.op_type = "Conv1D";
        e.name = std::string(padding) + ", dilation 2";
        e.attrs.set("strides", std::vector<std::int64_t>{1});
        e.attrs.set("dilations", std::vector<std::int64_t>{2});
        e.attrs.set("padding", padding);
        const graft::Order tcn{Axis::T, Axis::C, Axis::N};
        e.inputs = {input("x", OrderNTC, {2, 7, 3}, 46), input("w", tcn, {3, 3, 4}, 47, true), input("b", OrderC, {4}, 48, true)};
        const bool causal = std::string(padding) == "causal";
        e.reference = [causal](const std::vector<Operand>& in) {
            const Operand &x = in[0], &w = in[1];
            const std::int64_t pad = causal ? 4 : 2;  // (k - 1) * dilation, all before / split evenly
            return std::vector<Expected>{output("y", OrderNTC, {2, 7, 4}, [&](const Pos& p, std::int64_t) {
                double acc = at(in[2], Pos{{"C", p.at("C")}});
                for (std::int64_t k = 0; k < 3; ++k) {
                    const std::int64_t t = p.at("T") - pad + 2 * k;
                    if (t < 0 || t >= 7) continue;
                    for (std::int64_t ci = 0; ci < 3; ++ci)
                        acc += at(x, Pos{{"N", p.at("N")}, {"T", t}, {"C", ci}}) * w.data[static_cast<std::size_t>((k * 3 + ci) * 4 + p.at("C"))];
                }
                return acc;
            })};
        };
        v.push_back(e);
    }

    Example dw;
    dw.op_type = "DepthwiseConv2D";
    dw.name = "3x3 same, multiplier 2, bias, relu";
    dw.attrs.set("strides", std::vector<std::int64_t>{1, 1});
    dw.attrs.set("dilations", std::vector<std::int64_t>{1, 1});
    dw.attrs.set("padding", "same");
    dw.attrs.set("activation", "relu");
    const graft::Order hwcm{Axis::H, Axis::W, Axis::C, Axis("M")};
    dw.inputs = {input("x", OrderNHWC, {2, 5, 4, 3}, 49), input("w", hwcm, {3, 3, 3, 2}, 50, true), input("b", OrderC, {6}, 51, true)};
    dw.reference = [](const std::vector<Operand>& in) {
        const Operand& w = in[1];
        auto wt = [&](std::int64_t a, std::int64_t c, std::int64_t ci, std::int64_t m) {
            return static_cast<double>(w.data[static_cast<std::size_t>(((a * 3 + c) * 3 + ci) * 2 + m)]);
        };
        return std::vector<Expected>{conv2d(in[0], 5, 4, 3, 6, 3, 3, 1, 1, 1, 1, true, wt, &in[2], true, "H", "W", OrderNHWC, 2)};
    };
    v.push_back(dw);
    return v;
}

}  // namespace conformance
