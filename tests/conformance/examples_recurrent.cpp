// Conformance examples: the recurrent layers (SimpleRNN, LSTM, GRU, ConvLSTM2D) and Attention,
// with Keras' definitions:
//   SimpleRNN  h = act(x W + h R + b)
//   LSTM       gates i, f, c, o (column blocks of W, R, b, in that order): i = rec(.), f = rec(.),
//              g = act(.), o = rec(.); c = f * c + i * g; h = o * act(c)
//   GRU        gates z, r, h. reset_after false: z = rec(x Wz + h Rz + bz), r likewise,
//              hh = act(x Wh + (r * h) Rh + bh). reset_after true (bias rows: input, recurrent):
//              z = rec(x Wz + bz + h Rz + b'z), r likewise, hh = act(x Wh + bh + r * (h Rh + b'h)).
//              h = z * h + (1 - z) * hh.
// ONNX's additions: initial states h0 (and c0) [N, U] (else zeros); LSTM peepholes = [pi | pf |
// po]: i = rec(. + pi * c), f = rec(. + pf * c) with the previous c, o = rec(. + po * c) with the
// new one; input_forget: f = 1 - i; clip: every pre-activation (and the c that h reads) clamped
// to [-clip, clip] before its activation.
// The states start at zero. go_backwards reads the steps last to first and emits the sequence in
// that (reversed) order. With a mask (Keras' RNN), a masked step keeps the states and emits the
// previous output (zeros with zero_output_for_mask, and before any unmasked step); the last
// output is the last emitted one.
//   Attention  per item and head: s_j = scale * q_i . k_j (dot) or sum_d a_d tanh(scale * (q_id +
//              k_jd)) (tanh; a_d = 1 without a); s_j -= 1e9 where j > i (causal) or value j is
//              masked; y_i = softmax(s) . v (Keras' dense attention, MultiHeadAttention's core).
#include <algorithm>
#include <cmath>
#include <utility>

#include "reference.hpp"

namespace conformance {

namespace {

double gate_activation(const std::string& f, double v) {
    if (f == "tanh") return std::tanh(v);
    if (f == "sigmoid") return 1 / (1 + std::exp(-v));
    if (f == "hard_sigmoid") return std::clamp(0.2 * v + 0.5, 0.0, 1.0);  // Keras 2
    if (f == "relu") return std::max(v, 0.0);
    if (f == "softsign") return v / (1 + std::fabs(v));
    throw std::runtime_error("no reference for activation " + f);
}

struct Rnn {
    std::string type, name;
    std::int64_t n, t, i, u;
    std::string act = "tanh", rec = "sigmoid";
    bool seq = false, state = false, back = false, reset_after = false, bias = true, zero_out = false;
    bool init = false, peep = false, input_forget = false;  // h0 (and c0) inputs; LSTM peepholes
    double clip = 0;
    std::vector<float> mask;  // N x T, none if empty
    float range = 1.f;        // weights in [-range, range]
};

int gates(const std::string& type) { return type == "LSTM" ? 4 : type == "GRU" ? 3 : 1; }

Example rnn(const Rnn& r, unsigned seed) {
    Example e;
    e.op_type = r.type;
    e.name = r.name;
    const std::int64_t G = gates(r.type) * r.u;
    e.attrs.set("units", r.u);
    e.attrs.set("activation", r.act);
    e.attrs.set("recurrent_activation", r.rec);
    e.attrs.set("return_sequences", r.seq);
    e.attrs.set("return_state", r.state);
    e.attrs.set("go_backwards", r.back);
    if (r.type == "GRU") e.attrs.set("reset_after", r.reset_after);
    if (r.clip > 0) e.attrs.set("clip", r.clip);
    if (r.input_forget) e.attrs.set("input_forget", true);
    e.inputs = {input("x", OrderNTC, {r.n, r.t, r.i}, seed), input("w", OrderCN, {r.i, G}, seed + 1, true, -r.range, r.range),
                input("r", OrderCN, {r.u, G}, seed + 2, true, -r.range, r.range)};
    if (r.bias) e.inputs.push_back(input("b", OrderC, {(r.reset_after ? 2 : 1) * G}, seed + 3, true, -r.range, r.range));
    if (r.init) {
        e.inputs.push_back(input("h0", OrderNC, {r.n, r.u}, seed + 4));
        if (r.type == "LSTM") e.inputs.push_back(input("c0", OrderNC, {r.n, r.u}, seed + 5));
    }
    if (r.peep) e.inputs.push_back(input("peepholes", OrderC, {3 * r.u}, seed + 6, true, -r.range, r.range));
    if (!r.mask.empty()) {
        e.attrs.set("zero_output_for_mask", r.zero_out);
        Operand m{"mask", OrderNT, {r.n, r.t}, false, r.mask};
        e.inputs.push_back(m);
    }
    e.reference = [r, G](const std::vector<Operand>& in) {
        const Operand &x = in[0], &W = in[1], &R = in[2];
        const Operand* b = r.bias ? &find(in, "b") : nullptr;
        const Operand* m = r.mask.empty() ? nullptr : &find(in, "mask");
        const Operand* h0 = r.init ? &find(in, "h0") : nullptr;
        const Operand* c0 = r.init && r.type == "LSTM" ? &find(in, "c0") : nullptr;
        const Operand* P = r.peep ? &find(in, "peepholes") : nullptr;
        const auto U = static_cast<std::size_t>(r.u);
        auto clip = [&](double v) { return r.clip > 0 ? std::clamp(v, -r.clip, r.clip) : v; };
        const Shape ys = r.seq ? Shape{r.n, r.t, r.u} : Shape{r.n, r.u};
        Expected y{"y", r.seq ? OrderNTC : OrderNC, ys, std::vector<double>(static_cast<std::size_t>(count(ys)))};
        Expected hs{"h", OrderNC, {r.n, r.u}, std::vector<double>(static_cast<std::size_t>(r.n * r.u))}, cs = hs;
        cs.port = "c";
        auto wt = [](const Operand& o, std::int64_t row, std::int64_t col, std::int64_t cols) {
            return static_cast<double>(o.data[static_cast<std::size_t>(row * cols + col)]);
        };
        for (std::int64_t n = 0; n < r.n; ++n) {
            std::vector<double> h(U, 0.0), c(U, 0.0), out(U, 0.0);
            for (std::size_t j = 0; j < U; ++j) {
                if (h0) h[j] = at(*h0, Pos{{"N", n}, {"C", static_cast<std::int64_t>(j)}});
                if (c0) c[j] = at(*c0, Pos{{"N", n}, {"C", static_cast<std::int64_t>(j)}});
            }
            for (std::int64_t s = 0; s < r.t; ++s) {
                const std::int64_t t = r.back ? r.t - 1 - s : s;
                // xw: x W + input bias; hr: h R (+ the recurrent bias of a reset_after GRU)
                std::vector<double> xw(static_cast<std::size_t>(G)), hr(static_cast<std::size_t>(G));
                for (std::int64_t j = 0; j < G; ++j) {
                    double a = b ? b->data[static_cast<std::size_t>(j)] : 0.0;
                    for (std::int64_t i = 0; i < r.i; ++i) a += at(x, Pos{{"N", n}, {"T", t}, {"C", i}}) * wt(W, i, j, G);
                    double q = b && r.reset_after ? b->data[static_cast<std::size_t>(G + j)] : 0.0;
                    for (std::size_t k = 0; k < U; ++k) q += h[k] * wt(R, static_cast<std::int64_t>(k), j, G);
                    xw[static_cast<std::size_t>(j)] = a, hr[static_cast<std::size_t>(j)] = q;
                }
                std::vector<double> hn(U), cn = c;
                for (std::size_t j = 0; j < U; ++j) {
                    auto pre = [&](std::size_t g) { return xw[g * U + j] + hr[g * U + j]; };
                    auto peep = [&](std::size_t g) { return P ? static_cast<double>(P->data[g * U + j]) : 0.0; };
                    if (r.type == "SimpleRNN") {
                        hn[j] = gate_activation(r.act, clip(pre(0)));
                    } else if (r.type == "LSTM") {
                        const double ig = gate_activation(r.rec, clip(pre(0) + peep(0) * c[j]));
                        const double fg = r.input_forget ? 1 - ig : gate_activation(r.rec, clip(pre(1) + peep(1) * c[j]));
                        const double gg = gate_activation(r.act, clip(pre(2)));
                        cn[j] = fg * c[j] + ig * gg;
                        const double og = gate_activation(r.rec, clip(pre(3) + peep(2) * cn[j]));
                        hn[j] = og * gate_activation(r.act, clip(cn[j]));
                    }
                }
                if (r.type == "GRU") {
                    std::vector<double> z(U), rg(U);
                    for (std::size_t j = 0; j < U; ++j) {
                        z[j] = gate_activation(r.rec, clip(xw[j] + hr[j]));
                        rg[j] = gate_activation(r.rec, clip(xw[U + j] + hr[U + j]));
                    }
                    for (std::size_t j = 0; j < U; ++j) {
                        double rec;
                        if (r.reset_after) {
                            rec = rg[j] * hr[2 * U + j];
                        } else {
                            rec = 0;
                            for (std::size_t k = 0; k < U; ++k)
                                rec += rg[k] * h[k] * wt(R, static_cast<std::int64_t>(k), static_cast<std::int64_t>(2 * U + j), G);
                        }
                        hn[j] = z[j] * h[j] + (1 - z[j]) * gate_activation(r.act, clip(xw[2 * U + j] + rec));
                    }
                }
                if (!m || at(*m, Pos{{"N", n}, {"T", t}}) != 0) {
                    h = hn, c = cn, out = hn;
                } else if (r.zero_out) {
                    std::fill(out.begin(), out.end(), 0.0);
                }
                if (r.seq)
                    for (std::size_t j = 0; j < U; ++j) y.data[static_cast<std::size_t>((n * r.t + s) * r.u) + j] = out[j];
            }
            for (std::size_t j = 0; j < U; ++j) {
                const auto k = static_cast<std::size_t>(n * r.u) + j;
                if (!r.seq) y.data[k] = out[j];
                hs.data[k] = h[j];
                cs.data[k] = c[j];
            }
        }
        std::vector<Expected> outs{y};
        if (r.state) outs.push_back(hs);
        if (r.state && r.type == "LSTM") outs.push_back(cs);
        return outs;
    };
    return e;
}

struct Att {
    std::string name;
    std::int64_t n, tq, tv, heads, dk, dv;
    std::string score = "dot";
    double scale = 1.0;
    bool causal = false, weights = false;
    std::vector<float> vmask = {};  // N x Tv, none if empty
};

Example attention(const Att& a, unsigned seed) {
    Example e;
    e.op_type = "Attention";
    e.name = a.name;
    e.attrs.set("heads", a.heads);
    e.attrs.set("score", a.score);
    e.attrs.set("scale", a.scale);
    e.attrs.set("causal", a.causal);
    e.inputs = {input("q", OrderNTC, {a.n, a.tq, a.heads * a.dk}, seed), input("k", OrderNTC, {a.n, a.tv, a.heads * a.dk}, seed + 1),
                input("v", OrderNTC, {a.n, a.tv, a.heads * a.dv}, seed + 2)};
    if (a.weights) e.inputs.push_back(input("a", OrderC, {a.dk}, seed + 3, true));
    if (!a.vmask.empty()) e.inputs.push_back(Operand{"vmask", OrderNT, {a.n, a.tv}, false, a.vmask});
    e.reference = [a](const std::vector<Operand>& in) {
        const Operand &q = in[0], &k = in[1], &v = in[2];
        const Operand* w = a.weights ? &find(in, "a") : nullptr;
        const Operand* m = a.vmask.empty() ? nullptr : &find(in, "vmask");
        return std::vector<Expected>{output("y", OrderNTC, {a.n, a.tq, a.heads * a.dv}, [&](const Pos& p, std::int64_t) {
            const std::int64_t n = p.at("N"), i = p.at("T"), h = p.at("C") / a.dv, d = p.at("C") % a.dv;
            std::vector<double> s(static_cast<std::size_t>(a.tv));
            for (std::int64_t j = 0; j < a.tv; ++j) {
                double sc = 0;
                for (std::int64_t e2 = 0; e2 < a.dk; ++e2) {
                    const double qv = at(q, Pos{{"N", n}, {"T", i}, {"C", h * a.dk + e2}});
                    const double kv = at(k, Pos{{"N", n}, {"T", j}, {"C", h * a.dk + e2}});
                    if (a.score == "dot") sc += a.scale * qv * kv;
                    else sc += (w ? w->data[static_cast<std::size_t>(e2)] : 1.0) * std::tanh(a.scale * (qv + kv));
                }
                if ((a.causal && j > i) || (m && at(*m, Pos{{"N", n}, {"T", j}}) == 0)) sc -= 1e9;
                s[static_cast<std::size_t>(j)] = sc;
            }
            const double mx = *std::max_element(s.begin(), s.end());
            double sum = 0, acc = 0;
            for (auto& x : s) sum += (x = std::exp(x - mx));
            for (std::int64_t j = 0; j < a.tv; ++j)
                acc += s[static_cast<std::size_t>(j)] / sum * at(v, Pos{{"N", n}, {"T", j}, {"C", h * a.dv + d}});
            return acc;
        })};
    };
    return e;
}

/// ConvLSTM2D: an LSTM (gates i, f, c, o as above) whose products are convolutions: z = conv(x_t,
/// w) with the strides, dilations and TF padding given, + b, + conv(h, r) at stride 1, dilation 1,
/// TF same padding. States [n, oh, ow, f] start at zero.
struct ConvLstm {
    std::string name;
    std::int64_t n, t, h, w, cin, kh, kw, f;
    std::int64_t sh = 1, sw = 1, dh = 1, dw = 1;
    bool same = false, bias = true, sequences = false, state = false, backwards = false;
    std::string act = "tanh", rec = "sigmoid";
};

/// One axis of TF's forward convolution: output size and leading pad.
std::pair<std::int64_t, std::int64_t> tf_span(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d, bool same) {
    const std::int64_t reach = (k - 1) * d + 1;
    if (!same) return {(in - reach) / s + 1, 0};
    const std::int64_t out = (in + s - 1) / s;
    return {out, std::max<std::int64_t>((out - 1) * s + reach - in, 0) / 2};
}

Example conv_lstm(const ConvLstm& cl, unsigned seed) {
    Example e;
    e.op_type = "ConvLSTM2D";
    e.name = cl.name;
    const graft::Order nthwc{Axis::N, Axis::T, Axis::H, Axis::W, Axis::C};
    e.attrs.set("strides", std::vector<std::int64_t>{cl.sh, cl.sw});
    e.attrs.set("dilations", std::vector<std::int64_t>{cl.dh, cl.dw});
    e.attrs.set("padding", cl.same ? "same" : "valid");
    e.attrs.set("activation", cl.act);
    e.attrs.set("recurrent_activation", cl.rec);
    e.attrs.set("return_sequences", cl.sequences);
    e.attrs.set("return_state", cl.state);
    e.attrs.set("go_backwards", cl.backwards);
    e.inputs = {input("x", nthwc, {cl.n, cl.t, cl.h, cl.w, cl.cin}, seed, false, -1.f, 1.f),
                input("w", graft::OrderHWCN, {cl.kh, cl.kw, cl.cin, 4 * cl.f}, seed + 1, true, -0.5f, 0.5f),
                input("r", graft::OrderHWCN, {cl.kh, cl.kw, cl.f, 4 * cl.f}, seed + 2, true, -0.5f, 0.5f)};
    if (cl.bias) e.inputs.push_back(input("b", graft::OrderC, {4 * cl.f}, seed + 3, true, -0.5f, 0.5f));
    e.reference = [cl, nthwc](const std::vector<Operand>& in) {
        const auto hs = tf_span(cl.h, cl.kh, cl.sh, cl.dh, cl.same), ws = tf_span(cl.w, cl.kw, cl.sw, cl.dw, cl.same);
        const std::int64_t oh = hs.first, pt = hs.second, ow = ws.first, pl = ws.second;
        const std::int64_t rpt = (cl.kh - 1) / 2, rpl = (cl.kw - 1) / 2, F = cl.f;
        auto idx = [&](std::int64_t n, std::int64_t i, std::int64_t j, std::int64_t c) {
            return static_cast<std::size_t>(((n * oh + i) * ow + j) * F + c);
        };
        std::vector<double> h(static_cast<std::size_t>(cl.n * oh * ow * F), 0.0), c = h, seq;
        for (std::int64_t step = 0; step < cl.t; ++step) {
            const std::int64_t ts = cl.backwards ? cl.t - 1 - step : step;
            std::vector<double> hn = h, cn = c;
            for (std::int64_t n = 0; n < cl.n; ++n)
                for (std::int64_t i = 0; i < oh; ++i)
                    for (std::int64_t j = 0; j < ow; ++j) {
                        std::vector<double> z(static_cast<std::size_t>(4 * F));
                        for (std::int64_t g = 0; g < 4 * F; ++g) {
                            double acc = cl.bias ? at(in[3], Pos{{"C", g}}) : 0.0;
                            for (std::int64_t a = 0; a < cl.kh; ++a)
                                for (std::int64_t b = 0; b < cl.kw; ++b) {
                                    const std::int64_t y = i * cl.sh - pt + a * cl.dh, x = j * cl.sw - pl + b * cl.dw;
                                    if (y >= 0 && y < cl.h && x >= 0 && x < cl.w)
                                        for (std::int64_t k = 0; k < cl.cin; ++k)
                                            acc += at(in[0], Pos{{"N", n}, {"T", ts}, {"H", y}, {"W", x}, {"C", k}}) *
                                                   at(in[1], Pos{{"H", a}, {"W", b}, {"C", k}, {"N", g}});
                                    const std::int64_t ry = i - rpt + a, rx = j - rpl + b;
                                    if (ry >= 0 && ry < oh && rx >= 0 && rx < ow)
                                        for (std::int64_t k = 0; k < F; ++k)
                                            acc += h[idx(n, ry, rx, k)] * at(in[2], Pos{{"H", a}, {"W", b}, {"C", k}, {"N", g}});
                                }
                            z[static_cast<std::size_t>(g)] = acc;
                        }
                        for (std::int64_t k = 0; k < F; ++k) {
                            auto zg = [&](std::int64_t gate) { return z[static_cast<std::size_t>(gate * F + k)]; };
                            const double ig = gate_activation(cl.rec, zg(0)), fg = gate_activation(cl.rec, zg(1)),
                                         gg = gate_activation(cl.act, zg(2)), og = gate_activation(cl.rec, zg(3));
                            cn[idx(n, i, j, k)] = fg * c[idx(n, i, j, k)] + ig * gg;
                            hn[idx(n, i, j, k)] = og * gate_activation(cl.act, cn[idx(n, i, j, k)]);
                        }
                    }
            h = hn, c = cn;
            seq.insert(seq.end(), h.begin(), h.end());  // [step][n][oh][ow][f]
        }
        auto state = [&](const std::string& port, const std::vector<double>& s) {
            return output(port, graft::OrderNHWC, {cl.n, oh, ow, F}, [&](const Pos& p, std::int64_t) {
                return s[idx(p.at("N"), p.at("H"), p.at("W"), p.at("C"))];
            });
        };
        std::vector<Expected> out;
        if (cl.sequences)
            out.push_back(output("y", nthwc, {cl.n, cl.t, oh, ow, F}, [&](const Pos& p, std::int64_t) {
                return seq[static_cast<std::size_t>(p.at("T") * cl.n * oh * ow * F) + idx(p.at("N"), p.at("H"), p.at("W"), p.at("C"))];
            }));
        else
            out.push_back(state("y", h));
        if (cl.state) {
            out.push_back(state("h", h));
            out.push_back(state("c", c));
        }
        return out;
    };
    return e;
}

}  // namespace

std::vector<Example> recurrent_examples() {
    std::vector<Example> v;
    Seeds next(300, 8);  // an example uses up to 7 seeds
    const std::vector<float> mask24{1, 1, 0, 1, 0, 1, 1, 0};  // item 0: step 2 masked; item 1: the first and the last

    auto make = [](std::string type, std::string name, std::int64_t n, std::int64_t t, std::int64_t i, std::int64_t u) {
        Rnn r;
        r.type = std::move(type), r.name = std::move(name), r.n = n, r.t = t, r.i = i, r.u = u;
        return r;
    };

    Rnn s1 = make("SimpleRNN", "tanh, bias, last output", 2, 4, 3, 5);
    Rnn s2 = make("SimpleRNN", "relu, no bias, go_backwards, sequences and state, batch 1", 1, 4, 3, 4);
    s2.act = "relu", s2.bias = false, s2.back = true, s2.seq = true, s2.state = true, s2.range = 0.6f;
    Rnn s3 = make("SimpleRNN", "mask, sequences", 2, 4, 2, 3);
    s3.mask = mask24, s3.seq = true;
    Rnn s4 = make("SimpleRNN", "initial state, clip 0.5, go_backwards, sequences and state", 2, 3, 3, 4);
    s4.init = true, s4.clip = 0.5, s4.back = true, s4.seq = true, s4.state = true;
    for (const Rnn& r : {s1, s2, s3, s4}) v.push_back(rnn(r, next()));

    Rnn l1 = make("LSTM", "tanh/sigmoid, sequences and states", 2, 4, 3, 4);
    l1.seq = true, l1.state = true;
    Rnn l2 = make("LSTM", "hard_sigmoid, go_backwards, batch 1", 1, 5, 3, 3);
    l2.rec = "hard_sigmoid", l2.back = true;
    Rnn l3 = make("LSTM", "mask, zero_output_for_mask, last output and states", 2, 4, 2, 3);
    l3.mask = mask24, l3.zero_out = true, l3.state = true;
    Rnn l4 = make("LSTM", "mask, go_backwards, sequences, no bias", 2, 4, 2, 3);
    l4.mask = mask24, l4.back = true, l4.seq = true, l4.bias = false;
    // Batch 1 with 64 units takes the kernel's path that splits each step by units (weights
    // regrouped per slice): larger than the other examples so that this path is checked too.
    Rnn l5 = make("LSTM", "64 units, batch 1 (steps split by units), sequences and states", 1, 3, 4, 64);
    l5.seq = true, l5.state = true, l5.range = 0.25f;
    Rnn l6 = make("LSTM", "initial states, peepholes, sequences and states", 2, 4, 3, 4);
    l6.init = true, l6.peep = true, l6.seq = true, l6.state = true;
    Rnn l7 = make("LSTM", "peepholes, clip 0.8, input_forget, mask, go_backwards, states", 2, 4, 2, 3);
    l7.peep = true, l7.clip = 0.8, l7.input_forget = true, l7.mask = mask24, l7.back = true, l7.state = true, l7.range = 1.5f;
    // The split-by-units path with initial states (the kernel's own copy of h0 / c0).
    Rnn l8 = make("LSTM", "64 units, batch 1, initial states, sequences and states", 1, 3, 4, 64);
    l8.init = true, l8.seq = true, l8.state = true, l8.range = 0.25f;
    for (const Rnn& r : {l1, l2, l3, l4, l5, l6, l7, l8}) v.push_back(rnn(r, next()));

    Rnn g1 = make("GRU", "reset_after, sequences and state", 2, 4, 3, 4);
    g1.reset_after = true, g1.seq = true, g1.state = true;
    Rnn g2 = make("GRU", "reset_after false, go_backwards, batch 1", 1, 4, 3, 4);
    g2.back = true;
    Rnn g3 = make("GRU", "reset_after false, relu and hard_sigmoid, mask, sequences", 2, 4, 3, 3);
    g3.act = "relu", g3.rec = "hard_sigmoid", g3.mask = mask24, g3.seq = true, g3.range = 0.6f;
    Rnn g4 = make("GRU", "reset_after, no bias, softsign, mask, zero_output_for_mask, sequences and state", 2, 4, 2, 3);
    g4.reset_after = true, g4.bias = false, g4.act = "softsign", g4.mask = mask24, g4.zero_out = true, g4.seq = true, g4.state = true;
    Rnn g5 = make("GRU", "reset_after, initial state, clip 0.3, sequences and state", 2, 4, 3, 4);
    g5.reset_after = true, g5.init = true, g5.clip = 0.3, g5.seq = true, g5.state = true, g5.range = 1.5f;
    Rnn g6 = make("GRU", "reset_after false, initial state, mask, sequences and state", 2, 4, 3, 3);
    g6.init = true, g6.mask = mask24, g6.zero_out = true, g6.seq = true, g6.state = true;
    for (const Rnn& r : {g1, g2, g3, g4, g5, g6}) v.push_back(rnn(r, next()));

    Att a1{"dot, 1 head, Tq 3, Tv 4", 2, 3, 4, 1, 4, 3};
    Att a2{"dot, 2 heads, scale 1/sqrt(dk), causal", 2, 4, 4, 2, 2, 3};
    a2.scale = 1 / std::sqrt(2.0), a2.causal = true;
    Att a3{"dot, 2 heads, causal, value mask", 2, 3, 5, 2, 3, 2};
    a3.causal = true, a3.scale = 0.8, a3.vmask = {1, 0, 1, 1, 0, 1, 1, 0, 0, 1};
    Att a4{"tanh score with weights, scale 0.7, value mask", 2, 3, 4, 1, 3, 2};
    a4.score = "tanh", a4.scale = 0.7, a4.weights = true, a4.vmask = {0, 1, 1, 0, 1, 1, 1, 1};
    Att a5{"tanh score without weights, 2 heads, causal", 1, 4, 4, 2, 2, 2};
    a5.score = "tanh", a5.causal = true;
    for (const Att& a : {a1, a2, a3, a4, a5}) v.push_back(attention(a, next()));

    // ConvLSTM {name, n, t, h, w, cin, kh, kw, f}, then strides, dilations and flags
    ConvLstm c1{"3x3 same, return_sequences", 2, 3, 4, 5, 2, 3, 3, 2};
    c1.same = true, c1.sequences = true;
    ConvLstm c2{"2x3 valid, strides 2x1, hard_sigmoid, return_state", 1, 3, 5, 4, 3, 2, 3, 3};
    c2.sh = 2, c2.rec = "hard_sigmoid", c2.state = true;
    ConvLstm c3{"2x2 same, dilations 2, go_backwards, no bias, sequences and state", 2, 4, 4, 4, 1, 2, 2, 2};
    c3.dh = 2, c3.dw = 2, c3.same = true, c3.bias = false, c3.sequences = true, c3.state = true, c3.backwards = true;
    ConvLstm c4{"1-D as a height of 1: 1x3 same, strides 1x2, relu", 2, 3, 1, 7, 2, 1, 3, 2};
    c4.sw = 2, c4.same = true, c4.act = "relu";
    for (const ConvLstm& c : {c1, c2, c3, c4}) v.push_back(conv_lstm(c, next()));
    return v;
}

}  // namespace conformance
