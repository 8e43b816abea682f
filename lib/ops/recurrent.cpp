// Recurrent layers: SimpleRNN, LSTM and GRU over x NTC with Keras weight layouts
// (w CN [in, gates*units], r CN [units, gates*units], b C). Outputs y (NTC with
// return_sequences, else NC) and, with return_state, h (and c for LSTM).
#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/gemv.hpp"
#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

int gates_of(const std::string& type) { return type == "LSTM" ? 4 : type == "GRU" ? 3 : 1; }
bool type_is_lstm(const Operator& op) { return op.type() == "LSTM"; }

cpu::RnnParams rnn_params(const Operator& op) {
    const Variable& x = in(op, "x");
    expect_axes(op, x, OrderNTC, "input");
    const int g = gates_of(op.type());
    const std::int64_t u = op.attr<std::int64_t>("units");
    cpu::RnnParams p;
    p.n = x.size(Axis::N), p.t = x.size(Axis::T), p.i = x.size(Axis::C), p.u = u;
    p.return_sequences = op.attr_or<bool>("return_sequences", false);
    p.go_backwards = op.attr_or<bool>("go_backwards", false);
    p.act = act_params(op, op.attr_or<std::string>("activation", "tanh"));
    p.rec_act = act_params(op, op.attr_or<std::string>("recurrent_activation", "sigmoid"));
    const Variable& w = in(op, "w");
    const Variable& r = in(op, "r");
    if (w.order() != OrderCN || w.shape() != Shape{p.i, g * u})
        shape_fail(op, "kernel " + w.describe() + " should be CN " + shape_str({p.i, g * u}));
    if (r.order() != OrderCN || r.shape() != Shape{u, g * u})
        shape_fail(op, "recurrent kernel " + r.describe() + " should be CN " + shape_str({u, g * u}));
    if (auto* b = op.input_or_null("b")) {
        const bool two_rows = op.type() == "GRU" && op.attr_or<bool>("reset_after", false);
        const std::int64_t n = (two_rows ? 2 : 1) * g * u;
        if (b->order() != OrderC || b->shape()[0] != n) shape_fail(op, "bias " + b->describe() + " should be C [" + std::to_string(n) + "]");
    }
    if (p.t < 1 && p.t != kDynamic) shape_fail(op, "needs at least one timestep");
    if (auto* m = op.input_or_null("mask")) {
        expect_axes(op, *m, OrderNT, "mask");
        if (m->size(Axis::T) != p.t) shape_fail(op, "mask " + m->describe() + " should have " + std::to_string(p.t) + " steps");
        p.masked = true;
        p.zero_output_for_mask = op.attr_or<bool>("zero_output_for_mask", false);
    }
    return p;
}

Outputs infer_rnn(const Operator& op) {
    auto p = rnn_params(op);
    Outputs out;
    if (p.return_sequences) out.push_back({"y", {OrderNTC, {p.n, p.t, p.u}}});
    else out.push_back({"y", {OrderNC, {p.n, p.u}}});
    if (op.attr_or<bool>("return_state", false)) {
        out.push_back({"h", {OrderNC, {p.n, p.u}}});
        if (op.type() == "LSTM") out.push_back({"c", {OrderNC, {p.n, p.u}}});
    }
    return out;
}

std::optional<Order> order_rnn(const Operator&, const std::string& input) {
    if (input == "x") return OrderNTC;
    if (input == "b") return OrderC;
    if (input == "mask") return OrderNT;
    return OrderCN;
}

std::unique_ptr<native::Kernel> build_rnn(native::BuildContext& b) {
    const Operator& op = b.op();
    auto p = rnn_params(op);
    const int g = gates_of(op.type());
    const bool reset_after = op.attr_or<bool>("reset_after", false);
    auto work = b.workspace(static_cast<std::size_t>(cpu::rnn_workspace(p, g)));
    auto x = b.in("x"), w = b.in("w"), r = b.in("r"), y = b.out("y");
    std::optional<native::Slot> bias, h, cst, mask;
    if (op.has_input("b")) bias = b.in("b");
    if (op.has_input("mask")) mask = b.in("mask");
    if (op.output_or_null("h")) h = b.out("h");
    if (op.output_or_null("c")) cst = b.out("c");
    // Constant weights are packed once, here, into the GEMM's panel layout (W for the input
    // projection, R for the step products); the pool comes with each run.
    cpu::RnnPrepared prep;
    const Variable& wv = *op.input("w");
    const Variable& rv = *op.input("r");
    const Variable* bv = op.input_or_null("b");
    const bool default_acts = p.act.kind == cpu::Act::tanh && p.rec_act.kind == cpu::Act::sigmoid;
    if (type_is_lstm(op) && p.n == 1 && default_acts && p.u >= 64 && p.u % 8 == 0 && wv.is_constant() && rv.is_constant() &&
        (!bv || bv->is_constant())) {
        // Batch 1: each step split by units in two slices (one per thread when the pool has
        // two), W, R and b regrouped so that a slice's four gates are adjacent.
        constexpr int parts = 2;
        const std::int64_t g4 = 4 * p.u;
        auto order = [&](const Variable& v, std::int64_t rows) {
            std::vector<float> out(static_cast<std::size_t>(rows * g4));
            cpu::rnn_lstm_part_order(static_cast<const ConstantVariable&>(v).data().data(), rows, p.u, parts, out.data());
            return out;
        };
        prep.parts = parts;
        const auto wo = order(wv, p.i), ro = order(rv, p.u);
        prep.w_packed = b.keep(std::make_shared<const std::vector<float>>(cpu::gemm::pack_b(wo.data(), g4, p.i, g4)));
        prep.r_gemv = b.keep(std::make_shared<const std::vector<float>>(cpu::gemm::gemv_pack(ro.data(), g4, p.u, g4)));
        if (bv) prep.b_parts = b.keep(std::make_shared<const std::vector<float>>(order(*bv, 1)));
    } else if (wv.is_constant()) {
        const auto& d = static_cast<const ConstantVariable&>(wv).data();
        prep.w_packed = b.keep(std::make_shared<const std::vector<float>>(cpu::gemm::pack_b(d.data(), g * p.u, p.i, g * p.u)));
    }
    if (rv.is_constant() && prep.parts == 0) {
        // Panels for products of several rows; the matrix-vector layout when a thread may get a
        // single row (batch 1, or a small batch split over threads).
        const auto& d = static_cast<const ConstantVariable&>(rv).data();
        const bool split = op.type() == "GRU" && !reset_after;
        auto pack = [&](bool gemv) {
            return b.keep(std::make_shared<const std::vector<float>>(cpu::rnn_pack_recurrent(d.data(), p.u, g, split, gemv)));
        };
        if (p.n >= 2) prep.r_packed = pack(false);
        if (p.n <= 8) prep.r_gemv = pack(true);
    }
    const std::string type = op.type();
    auto opt = [](const native::RunContext& c, const std::optional<native::Slot>& s) { return s ? c.at(*s) : nullptr; };
    auto with_pool = [prep](const native::RunContext& c) {
        cpu::RnnPrepared q = prep;
        q.pool = c.pool;
        return q;
    };
    if (type == "LSTM")
        return native::make_kernel([=](const native::RunContext& c) {
            cpu::lstm(c.at(x), c.at(w), c.at(r), opt(c, bias), c.at(y), opt(c, h), opt(c, cst), p, c.at(work), nullptr,
                               nullptr, opt(c, mask), with_pool(c));
        });
    if (type == "GRU")
        return native::make_kernel([=](const native::RunContext& c) {
            cpu::gru(c.at(x), c.at(w), c.at(r), opt(c, bias), reset_after, c.at(y), opt(c, h), p, c.at(work), nullptr,
                              opt(c, mask), with_pool(c));
        });
    return native::make_kernel([=](const native::RunContext& c) {
        cpu::simple_rnn(c.at(x), c.at(w), c.at(r), opt(c, bias), c.at(y), opt(c, h), p, c.at(work), nullptr,
                                 opt(c, mask), with_pool(c));
    });
}

}  // namespace

void register_recurrent(Registry& r) {
    for (const char* type : {"SimpleRNN", "LSTM", "GRU"}) {
        OpSchema s;
        s.type = type;
        s.inputs = {"x", "w", "r", "b?", "mask?"};
        s.infer = infer_rnn;
        s.required_order = order_rnn;
        s.doc = "recurrent layer over x NTC; attrs units, activation, recurrent_activation, return_sequences, "
                "return_state, go_backwards (GRU: reset_after); optional Keras mask NT (attr zero_output_for_mask)";
        r.add_op(std::move(s));
        r.add_generator<native::Backend>(type, build_rnn);
    }
}

}  // namespace graft::ops
