// RNN, GRU and LSTM as graft's SimpleRNN, GRU and LSTM ops (lib/ops/recurrent), one op per
// direction.
//
// ONNX's W [D, G*H, I], R [D, G*H, H] (gate order LSTM i, o, f, c; GRU z, r, h) become the ops'
// w CN [I, G*H] and r CN [H, G*H] in Keras' gate order (i, f, c, o; z, r, h), B [D, 2*G*H]
// (Wb, then Rb) one bias Wb + Rb, or for a GRU with linear_before_reset the ops' reset_after
// bias [2, 3H] as it is, and P [D, 3H] (i, o, f) the LSTM's peepholes (i, f, o). Known weights
// are rearranged now; weights computed when the model runs (ONNX's node tests feed them as
// inputs) by crops, concats and a transpose in the graph. X ([T, N, I], layout 1: [N, T, I]) is
// read as NTC by renaming its axes; the reverse direction is go_backwards, its sequence reversed
// back into time order; bidirectional runs both and stacks their outputs along the direction
// axis. initial_h / initial_c are the ops' h0 / c0; a sequence_lens (known, or a model input) shorter than T somewhere
// is the ops' mask (a step past a length keeps the states and outputs zeros, as ONNX's).
#include <algorithm>
#include <cctype>

#include "frontend/onnx/ops/ops.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

using i64 = std::int64_t;

/// What kind of node: its IR op, its gates and how ONNX orders them.
struct Cell {
    const char* ir_type;
    int gates;
    std::vector<int> blocks;  ///< for each gate in the IR's order, its block in ONNX's order
    std::size_t acts;         ///< activation functions per direction (f; f, g; f, g, h)
};

const Cell kRnnCell{ops::kSimpleRNN, 1, {0}, 1};
const Cell kGruCell{ops::kGRU, 3, {0, 1, 2}, 2};
const Cell kLstmCell{ops::kLSTM, 4, {0, 2, 3, 1}, 3};  // ONNX i o f c -> Keras i f c o
const std::vector<int> kPeepholeBlocks{0, 2, 1};      // ONNX i o f -> the IR's i f o
// How runtime per-direction inputs are read: D the direction; W and R [D, G*H, in] with the gates
// cropped along H (the batch N cannot be cropped); B and P [D, n].
const Order kMatrix{Axis("D"), Axis("H"), Axis("W")};
const Order kVector{Axis("D"), Axis("C")};

/// One ONNX activation function as graft's (graft_rt/act.hpp), with its parameters.
struct Fn {
    std::string name;  ///< the ONNX name, for messages
    std::string ir;
    bool params = false;  ///< takes alpha (and threshold)
    double alpha = 0, threshold = 0;
};

/// The node's activation functions, per direction (`count` per direction, `dirs` directions):
/// ONNX's defaults without the attribute; alpha / beta consumed in order by the functions that
/// take them (ONNX Runtime's reading of "in the order of the activation functions").
std::vector<std::vector<Fn>> activations(const NodeContext& ctx, const Cell& cell, int dirs) {
    const Config& c = ctx.config();
    std::vector<std::string> names;
    if (c.has("activations")) {
        const Config l = c.get("activations");
        for (std::size_t i = 0; i < l.size(); ++i) names.push_back(l.at(i).as_string());
        if (names.size() != cell.acts * static_cast<std::size_t>(dirs))
            ctx.fail_format("attribute 'activations' has " + std::to_string(names.size()) + " entries, expected " +
                            std::to_string(cell.acts * static_cast<std::size_t>(dirs)) + " (" +
                            std::to_string(cell.acts) + " per direction)");
    } else {
        const std::vector<std::string> one = cell.acts == 1   ? std::vector<std::string>{"Tanh"}
                                             : cell.acts == 2 ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                              : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
        for (int d = 0; d < dirs; ++d) names.insert(names.end(), one.begin(), one.end());
    }
    auto floats = [&](const char* key) {
        std::vector<double> v;
        if (c.has(key)) {
            const Config l = c.get(key);
            for (std::size_t i = 0; i < l.size(); ++i) v.push_back(l.at(i).as_float());
        }
        return v;
    };
    const std::vector<double> alphas = floats("activation_alpha"), betas = floats("activation_beta");
    std::size_t ai = 0, bi = 0;
    auto next = [](const std::vector<double>& v, std::size_t& i, double fallback) { return i < v.size() ? v[i++] : fallback; };
    std::vector<std::vector<Fn>> out(static_cast<std::size_t>(dirs));
    for (std::size_t k = 0; k < names.size(); ++k) {
        std::string lower = names[k];
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        Fn f{names[k], lower};
        if (lower == "tanh" || lower == "sigmoid" || lower == "relu" || lower == "softsign" || lower == "softplus") {
        } else if (lower == "hardsigmoid") {
            f.ir = "hard_sigmoid_general", f.params = true, f.alpha = next(alphas, ai, 0.2), f.threshold = next(betas, bi, 0.5);
        } else if (lower == "leakyrelu") {
            f.ir = "leaky_relu", f.params = true, f.alpha = next(alphas, ai, 0.01);
        } else if (lower == "thresholdedrelu") {
            f.ir = "thresholded_relu", f.params = true, f.alpha = next(alphas, ai, 1.0);
        } else if (lower == "elu") {
            f.ir = "elu", f.params = true, f.alpha = next(alphas, ai, 1.0);
        } else {
            ctx.fail_unsupported("activation '" + names[k] +
                                 "' (attribute 'activations'); graft supports Tanh, Sigmoid, Relu, Softsign, Softplus, "
                                 "HardSigmoid, LeakyRelu, ThresholdedRelu and Elu");
        }
        out[k / cell.acts].push_back(std::move(f));
    }
    return out;
}

/// Sets the op's activation (g, and h) and recurrent_activation (f) attributes from one
/// direction's functions: graft's ops have one function for g and h and one set of parameters.
void set_activations(const NodeContext& ctx, const std::vector<Fn>& fns, Attributes& a) {
    const Fn& act = fns.size() == 1 ? fns[0] : fns[1];
    if (fns.size() == 3 && (fns[2].ir != fns[1].ir || fns[2].alpha != fns[1].alpha || fns[2].threshold != fns[1].threshold))
        ctx.fail_unsupported("activations g = " + fns[1].name + " and h = " + fns[2].name +
                             " differ (attribute 'activations'); graft's LSTM uses one function for both");
    a.set("activation", act.ir);
    double alpha = act.alpha, threshold = act.threshold;
    if (fns.size() > 1) {
        const Fn& rec = fns[0];
        if (rec.params && act.params && (rec.alpha != act.alpha || rec.threshold != act.threshold))
            ctx.fail_unsupported("activations " + rec.name + " and " + act.name +
                                 " with different parameters (attributes 'activation_alpha' / 'activation_beta'); "
                                 "graft's recurrent ops share one set");
        if (rec.params) alpha = rec.alpha, threshold = rec.threshold;
        a.set("recurrent_activation", rec.ir);
    }
    a.set("alpha", alpha);
    a.set("threshold", threshold);
}

/// One direction's part of an input: known values (row-major, dims `shape`) or an IR value.
struct Part {
    bool known = false;
    std::vector<float> data;
    Value value;
    Shape shape;
};

/// Input `k`'s part for direction `d`: the entry `d` of the axis that `names` calls D (the
/// direction), that axis removed; a runtime part keeps the other names of `names`. The input
/// must have shape `full` (a kDynamic entry matches any size: the batch).
Part direction_part(NodeContext& ctx, std::size_t k, const std::string& what, const Shape& full, const Order& names, i64 d) {
    const HostTensor* t = ctx.known(k);
    const Shape s = t ? t->shape : logical_shape(ctx.input(k));
    bool ok = s.size() == full.size();
    for (std::size_t i = 0; ok && i < s.size(); ++i) ok = full[i] == kDynamic || s[i] == full[i];
    if (!ok) ctx.fail_shape("input '" + ctx.node().input(static_cast<int>(k)) + "' (" + what + ") has shape " + shape_str(s) + ", expected " + shape_str(full));
    const std::size_t dir_axis = names.index(Axis::D);
    Part p;
    p.shape = s;
    p.shape.erase(p.shape.begin() + static_cast<std::ptrdiff_t>(dir_axis));
    if (t) {
        const std::vector<float> v = t->floats();
        i64 outer = 1, inner = 1;
        for (std::size_t i = 0; i < s.size(); ++i) (i < dir_axis ? outer : inner) *= i == dir_axis ? 1 : s[i];
        p.known = true;
        for (i64 o = 0; o < outer; ++o) {
            const auto from = v.begin() + static_cast<std::ptrdiff_t>((o * s[dir_axis] + d) * inner);
            p.data.insert(p.data.end(), from, from + static_cast<std::ptrdiff_t>(inner));
        }
        return p;
    }
    const std::string tag = what + std::to_string(d);
    const Value part = crop(ctx, ctx.relabel(ctx.input(k), names), dir_axis, d, d + 1, tag + "/part");
    std::vector<Axis> rest;
    for (std::size_t i = 0; i < names.ndim(); ++i)
        if (i != dir_axis) rest.push_back(names[i]);
    Attributes a;
    a.set("in_order", part.logical);
    a.set("out_order", Order(rest));
    a.set("shape", p.shape);
    p.value = emit(ctx, ops::kReshape, {{"x", part.var}}, std::move(a), Order(rest), tag);
    return p;
}

/// `p` (first axis of `blocks.size()` blocks, not the batch axis N) with its blocks in the order
/// `blocks` gives.
Part regroup(NodeContext& ctx, Part p, const std::vector<int>& blocks, const std::string& what) {
    bool identity = true;
    for (std::size_t g = 0; g < blocks.size(); ++g) identity = identity && blocks[g] == static_cast<int>(g);
    if (identity) return p;
    const auto n = static_cast<i64>(blocks.size());
    const i64 rows = p.shape[0] / n;
    if (p.known) {
        const auto block = static_cast<std::ptrdiff_t>(p.data.size() / blocks.size());
        std::vector<float> out;
        for (int b : blocks) out.insert(out.end(), p.data.begin() + b * block, p.data.begin() + (b + 1) * block);
        p.data = std::move(out);
        return p;
    }
    NamedVars ins;
    for (int b : blocks)
        ins.emplace_back("x" + std::to_string(ins.size()), crop(ctx, p.value, 0, b * rows, (b + 1) * rows, what + "/gate" + std::to_string(b)).var);
    Attributes a;
    a.set("axis", p.value.logical[0]);
    p.value = emit(ctx, ops::kConcat, std::move(ins), std::move(a), p.value.logical, what + "/gates");
    return p;
}

/// The first or second half of a 1-D part.
Part half(NodeContext& ctx, const Part& p, int which, const std::string& what) {
    const i64 n = p.shape[0] / 2;
    Part h;
    h.known = p.known;
    h.shape = {n};
    if (p.known) {
        h.data.assign(p.data.begin() + which * n, p.data.begin() + (which + 1) * n);
    } else {
        h.value = crop(ctx, p.value, 0, which * n, (which + 1) * n, what);
    }
    return h;
}

/// A part as an IR variable: a constant in `order` (a 2-D known part [rows, cols] transposed to
/// [cols, rows] when `transpose`) or the runtime value laid out in `order`.
Variable* as_var(NodeContext& ctx, const Part& p, const Order& order, bool transpose, const std::string& what) {
    if (!p.known) {
        const Order names = transpose ? OrderNC : order;  // ONNX's [G*H, in] is the IR's w with N = G*H, C = in
        return laid_out(ctx, p.value, names, order, what);
    }
    if (!transpose) return ctx.constant(ctx.layer_name() + "/" + what, order, p.shape, p.data);
    const i64 rows = p.shape[0], cols = p.shape[1];
    std::vector<float> t(p.data.size());
    for (i64 r = 0; r < rows; ++r)
        for (i64 c = 0; c < cols; ++c) t[static_cast<std::size_t>(c * rows + r)] = p.data[static_cast<std::size_t>(r * cols + c)];
    return ctx.constant(ctx.layer_name() + "/" + what, order, {cols, rows}, std::move(t));
}

bool all_zero(const Part& p) {
    return p.known && std::all_of(p.data.begin(), p.data.end(), [](float v) { return v == 0.f; });
}

/// The mask [N, T] of sequence_lens (a known one: null when every length is T), the ops' zero_output_for_mask
/// semantics being ONNX's for steps past a length.
Variable* sequence_mask(NodeContext& ctx, i64 n, i64 t, bool initial_state) {
    if (!ctx.has_input(4)) return nullptr;
    if (!ctx.known(4)) {
        // Lengths given when the model runs (a model input): mask[n, t] = t < lens[n], graft's Binary
        // less of the steps 0..T-1 and the lengths. A length of 0 with an initial state is not
        // checked then (graft's Y_h would be the initial state, ONNX Runtime's zeros).
        const Value& lens = ctx.input(4);
        if (lens.logical.ndim() != 1) ctx.fail_shape("sequence_lens has " + std::to_string(lens.logical.ndim()) + " dimensions, expected 1");
        std::vector<float> steps(static_cast<std::size_t>(t));
        for (i64 s = 0; s < t; ++s) steps[static_cast<std::size_t>(s)] = static_cast<float>(s);
        Attributes a;
        a.set("op", std::string("less"));
        a.set("order", OrderNT);
        return ctx.op(ops::kBinary, {{"a", ctx.constant(ctx.layer_name() + "/steps", Order{Axis::T}, {t}, std::move(steps))},
                                     {"b", ctx.relabel(lens, Order{Axis::N}).var}},
                      std::move(a), "mask")
            ->output("y");
    }
    const auto lens = ctx.known_ints(4, "sequence_lens");
    if (static_cast<i64>(lens.size()) != n && n != kDynamic)
        ctx.fail_shape("sequence_lens has " + std::to_string(lens.size()) + " entries, the batch is " + std::to_string(n));
    bool full = true;
    for (std::size_t i = 0; i < lens.size(); ++i) {
        if (lens[i] < 0 || lens[i] > t)
            ctx.fail_format("sequence_lens[" + std::to_string(i) + "] = " + std::to_string(lens[i]) + " is outside 0.." + std::to_string(t));
        if (lens[i] == 0 && initial_state)
            ctx.fail_unsupported("sequence_lens[" + std::to_string(i) + "] = 0 with an initial state (ONNX Runtime's Y_h is zeros then, graft's would be the initial state)");
        full = full && lens[i] == t;
    }
    if (full) return nullptr;
    if (n == kDynamic) ctx.fail_unsupported("sequence_lens shorter than the sequence with a dynamic batch; export with a fixed batch size");
    std::vector<float> m(static_cast<std::size_t>(n * t));
    for (i64 b = 0; b < n; ++b)
        for (i64 s = 0; s < t; ++s) m[static_cast<std::size_t>(b * t + s)] = s < lens[static_cast<std::size_t>(b)] ? 1.f : 0.f;
    return ctx.constant(ctx.layer_name() + "/mask", OrderNT, {n, t}, std::move(m));
}

/// The outputs of one direction's op: y NTC (with the sequence), h and c NC; null if not made.
struct DirectionOut {
    Variable *y = nullptr, *h = nullptr, *c = nullptr;
};

/// `parts` (one per direction) stacked along a new axis at position `axis` of `shape` (the
/// shape of one part with that axis of size 1), each part read in logical order `in`.
Value stack(NodeContext& ctx, const std::vector<Variable*>& parts, const Order& in, Shape shape, std::size_t axis, const std::string& what) {
    std::vector<Value> vs;
    for (std::size_t d = 0; d < parts.size(); ++d) vs.push_back(reshape(ctx, Value{parts[d], in}, shape, what + std::to_string(d)));
    if (vs.size() == 1) return vs[0];
    NamedVars ins;
    for (std::size_t d = 0; d < vs.size(); ++d) ins.emplace_back("x" + std::to_string(d), vs[d].var);
    Attributes a;
    a.set("axis", vs[0].logical[axis]);
    return emit(ctx, ops::kConcat, std::move(ins), std::move(a), vs[0].logical, what);
}

void convert(NodeContext& ctx, const Cell& cell) {
    if (ctx.opset() < 7) ctx.fail_unsupported(ctx.node().op_type() + "-1 (attribute output_sequence); graft reads opset 7 and later");
    expect_inputs(ctx, 3, cell.gates == 4 ? 8 : 6);
    const Config& c = ctx.config();
    const bool lstm = cell.gates == 4, gru = cell.gates == 3;
    const std::string direction = c.get_string("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
        ctx.fail_format("attribute 'direction' is '" + direction + "', expected forward, reverse or bidirectional");
    const int dirs = direction == "bidirectional" ? 2 : 1;
    const i64 layout = ctx.opset() >= 14 ? c.get_int("layout", 0) : 0;
    if (layout != 0 && layout != 1) ctx.fail_format("attribute 'layout' is " + std::to_string(layout) + ", expected 0 or 1");
    const double clip = c.get_float("clip", 0.0);
    if (c.has("clip") && !(clip > 0)) ctx.fail_format("attribute 'clip' is " + std::to_string(clip) + ", expected a positive threshold");
    const bool input_forget = lstm && c.get_int("input_forget", 0) != 0;
    const bool lbr = gru && c.get_int("linear_before_reset", 0) != 0;
    const auto fns = activations(ctx, cell, dirs);

    // X: [T, N, I] or [N, T, I], renamed NTC.
    const Value& x0 = ctx.input(0);
    if (x0.logical.ndim() != 3) ctx.fail_shape("X has rank " + std::to_string(x0.logical.ndim()) + ", expected 3");
    const Value x = ctx.relabel(x0, layout == 0 ? Order{Axis::T, Axis::N, Axis::C} : OrderNTC);
    const i64 T = x.var->size(Axis::T), N = x.var->size(Axis::N), I = x.var->size(Axis::C);
    if (T == kDynamic) ctx.fail_unsupported("a dynamic sequence length; export with a fixed one");
    const HostTensor* rk = ctx.known(2);
    const Shape r_shape = rk ? rk->shape : logical_shape(ctx.input(2));
    if (r_shape.size() != 3) ctx.fail_shape("R has shape " + shape_str(r_shape) + ", expected [num_directions, gates * hidden_size, hidden_size]");
    const i64 H = c.get_int("hidden_size", r_shape[2]);
    if (H < 1) ctx.fail_format("hidden_size " + std::to_string(H) + " should be at least 1");
    const i64 GH = cell.gates * H;
    const bool has_h0 = ctx.has_input(5), has_c0 = lstm && ctx.has_input(6);
    Variable* mask = sequence_mask(ctx, N, T, has_h0 || has_c0);

    const bool want_y = ctx.wants_output(0), want_h = ctx.wants_output(1), want_c = lstm && ctx.wants_output(2);
    // layout 0: h0 [D, N, H]; layout 1: [N, D, H].
    const Shape state_shape = layout == 0 ? Shape{dirs, N, H} : Shape{N, dirs, H};
    const std::size_t state_dir = layout == 0 ? 0 : 1;
    const Order state_names = layout == 0 ? Order{Axis::D, Axis::N, Axis::C} : Order{Axis::N, Axis::D, Axis::C};
    std::vector<DirectionOut> outs;
    for (int d = 0; d < dirs; ++d) {
        const bool backward = direction == "reverse" || d == 1;
        const std::string tag = dirs == 2 ? (d == 0 ? "forward/" : "backward/") : "";
        NamedVars ins{{"x", x.var}};
        ins.emplace_back("w", as_var(ctx, regroup(ctx, direction_part(ctx, 1, "W", {dirs, GH, I}, kMatrix, d), cell.blocks, tag + "W"), OrderCN, true, tag + "w"));
        ins.emplace_back("r", as_var(ctx, regroup(ctx, direction_part(ctx, 2, "R", {dirs, GH, H}, kMatrix, d), cell.blocks, tag + "R"), OrderCN, true, tag + "r"));
        if (ctx.has_input(3)) {
            const Part b = direction_part(ctx, 3, "B", {dirs, 2 * GH}, kVector, d);
            Part bias;
            if (lbr) {  // [Wb; Rb] is the reset_after bias as it is (z, r, h in both)
                bias = b;
            } else {
                const Part wb = half(ctx, b, 0, tag + "Wb"), rb = half(ctx, b, 1, tag + "Rb");
                bias = wb;
                if (wb.known)
                    for (std::size_t k = 0; k < bias.data.size(); ++k) bias.data[k] += rb.data[k];
                else
                    bias.value = binary(ctx, "Add", wb.value, rb.value, tag + "WRb");
                bias = regroup(ctx, bias, cell.blocks, tag + "B");
            }
            if (!all_zero(bias)) ins.emplace_back("b", as_var(ctx, bias, OrderC, false, tag + "b"));
        }
        if (mask) ins.emplace_back("mask", mask);
        if (has_h0) {
            const Part h0 = direction_part(ctx, 5, "initial_h", state_shape, state_names, d);
            if (!all_zero(h0)) ins.emplace_back("h0", as_var(ctx, h0, OrderNC, false, tag + "h0"));
        }
        if (has_c0) {
            const Part c0 = direction_part(ctx, 6, "initial_c", state_shape, state_names, d);
            if (!all_zero(c0)) ins.emplace_back("c0", as_var(ctx, c0, OrderNC, false, tag + "c0"));
        }
        if (lstm && ctx.has_input(7)) {
            const Part p = regroup(ctx, direction_part(ctx, 7, "P", {dirs, 3 * H}, kVector, d), kPeepholeBlocks, tag + "P");
            if (!all_zero(p)) ins.emplace_back("peepholes", as_var(ctx, p, OrderC, false, tag + "p"));
        }
        Attributes a;
        a.set("units", H);
        set_activations(ctx, fns[static_cast<std::size_t>(d)], a);
        a.set("return_sequences", want_y);
        a.set("return_state", want_h || want_c);
        a.set("go_backwards", backward);
        if (gru) a.set("reset_after", lbr);
        if (clip > 0) a.set("clip", clip);
        if (input_forget) a.set("input_forget", true);
        if (mask) a.set("zero_output_for_mask", true);
        Operator* op = ctx.op(cell.ir_type, std::move(ins), std::move(a), tag.empty() ? "" : tag.substr(0, tag.size() - 1));
        DirectionOut o;
        o.y = op->output("y");
        if (want_y && backward) {  // go_backwards emits in processing order: back into time order
            Attributes r;
            r.set("axis", Axis::T);
            o.y = ctx.op(ops::kReverse, {{"x", o.y}}, std::move(r), tag + "reverse")->output("y");
        }
        if (want_h || want_c) o.h = op->output("h");
        if (want_c) o.c = op->output("c");
        outs.push_back(o);
    }
    auto gather = [&](Variable* DirectionOut::*m) {
        std::vector<Variable*> v;
        for (const auto& o : outs) v.push_back(o.*m);
        return v;
    };
    if (want_y) {  // Y [T, D, N, H] or [N, T, D, H]
        const Value y = layout == 0 ? stack(ctx, gather(&DirectionOut::y), Order{Axis::T, Axis::N, Axis::C}, {T, 1, N, H}, 1, "Y")
                                    : stack(ctx, gather(&DirectionOut::y), OrderNTC, {N, T, 1, H}, 2, "Y");
        ctx.set_output(0, y.var, y.logical);
    }
    const Shape one_state = layout == 0 ? Shape{1, N, H} : Shape{N, 1, H};
    if (want_h) {
        const Value h = stack(ctx, gather(&DirectionOut::h), OrderNC, one_state, state_dir, "Y_h");
        ctx.set_output(1, h.var, h.logical);
    }
    if (want_c) {
        const Value cs = stack(ctx, gather(&DirectionOut::c), OrderNC, one_state, state_dir, "Y_c");
        ctx.set_output(2, cs.var, cs.logical);
    }
}

void rnn(NodeContext& ctx) { convert(ctx, kRnnCell); }
void gru(NodeContext& ctx) { convert(ctx, kGruCell); }
void lstm(NodeContext& ctx) { convert(ctx, kLstmCell); }

}  // namespace

void register_recurrent(Registry& r) {
    add(r, "RNN", rnn);
    add(r, "GRU", gru);
    add(r, "LSTM", lstm);
}

}  // namespace graft::onnx
