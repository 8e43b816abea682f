// The recurrent family (recurrent.hpp): schemas, native kernel builders and C++ emitters of
// SimpleRNN, LSTM and GRU. The native backend runs lib/cpu's packed, threaded kernels; generated
// code runs graft_rt/recurrent.hpp.
#include "ops/recurrent/recurrent.hpp"

#include <algorithm>
#include <cmath>

#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/gemv.hpp"
#include "cpu/gemm/qgemm.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

RnnAttrs RnnAttrs::parse(const Operator& op) {
    RnnAttrs a;
    a.cell = op.type() == kLSTM ? Cell::lstm : op.type() == kGRU ? Cell::gru : Cell::simple;
    a.gates = a.cell == Cell::lstm ? 4 : a.cell == Cell::gru ? 3 : 1;
    a.units = op.attr<std::int64_t>("units");
    a.act = act_params(op, op.attr_or<std::string>("activation", "tanh"));
    a.rec_act = act_params(op, op.attr_or<std::string>("recurrent_activation", "sigmoid"));
    a.return_sequences = op.attr_or<bool>("return_sequences", false);
    a.return_state = op.attr_or<bool>("return_state", false);
    a.go_backwards = op.attr_or<bool>("go_backwards", false);
    a.reset_after = a.cell == Cell::gru && op.attr_or<bool>("reset_after", false);
    a.zero_output_for_mask = op.attr_or<bool>("zero_output_for_mask", false);
    a.clip = static_cast<float>(op.attr_or<double>("clip", 0.0));
    if (!(a.clip >= 0.f)) shape_fail(op, "clip " + std::to_string(a.clip) + " should be positive (0: none)");
    a.input_forget = a.cell == Cell::lstm && op.attr_or<bool>("input_forget", false);
    return a;
}

graft_rt::RnnParams RnnAttrs::params(const Operator& op) const {
    const Variable& x = in(op, "x");
    expect_axes(op, x, OrderNTC, "input");
    const std::int64_t u = units, g = gates;
    graft_rt::RnnParams p;
    p.n = x.size(Axis::N), p.t = x.size(Axis::T), p.i = x.size(Axis::C), p.u = u;
    p.return_sequences = return_sequences;
    p.go_backwards = go_backwards;
    p.act = act;
    p.rec_act = rec_act;
    p.clip = clip;
    p.input_forget = input_forget;
    const Variable& w = in(op, "w");
    const Variable& r = in(op, "r");
    if (w.order() != OrderCN || w.shape() != Shape{p.i, g * u})
        shape_fail(op, "kernel " + w.describe() + " should be CN " + shape_str({p.i, g * u}));
    if (r.order() != OrderCN || r.shape() != Shape{u, g * u})
        shape_fail(op, "recurrent kernel " + r.describe() + " should be CN " + shape_str({u, g * u}));
    if (auto* b = op.input_or_null("b")) {
        const std::int64_t n = (reset_after ? 2 : 1) * g * u;
        if (b->order() != OrderC || b->shape()[0] != n)
            shape_fail(op, "bias " + b->describe() + " should be C [" + std::to_string(n) + "]");
    }
    for (const char* s : {"h0", "c0"})
        if (auto* v = op.input_or_null(s)) {
            if (cell != Cell::lstm && s == std::string("c0")) shape_fail(op, "only an LSTM has a cell state c0");
            if (v->order() != OrderNC || v->shape() != Shape{p.n, u})
                shape_fail(op, std::string("initial state ") + s + " " + v->describe() + " should be NC " +
                                   shape_str({p.n, u}));
        }
    if (auto* pp = op.input_or_null("peepholes")) {
        if (cell != Cell::lstm) shape_fail(op, "only an LSTM has peepholes");
        if (pp->order() != OrderC || pp->shape() != Shape{3 * u})
            shape_fail(op, "peepholes " + pp->describe() + " should be C [" + std::to_string(3 * u) + "]");
    }
    if (p.t < 1 && p.t != kDynamic) shape_fail(op, "needs at least one timestep");
    if (auto* m = op.input_or_null("mask")) {
        expect_axes(op, *m, OrderNT, "mask");
        if (m->size(Axis::T) != p.t)
            shape_fail(op, "mask " + m->describe() + " should have " + std::to_string(p.t) + " steps");
        p.masked = true;
        p.zero_output_for_mask = zero_output_for_mask;
    }
    return p;
}

namespace {

using i64 = std::int64_t;
using Cell = RnnAttrs::Cell;

// ---- schemas ----------------------------------------------------------------------------------

Outputs infer_rnn(const Operator& op) {
    const auto a = RnnAttrs::parse(op);
    const auto p = a.params(op);
    Outputs out;
    if (p.return_sequences)
        out.push_back({"y", {OrderNTC, {p.n, p.t, p.u}}});
    else
        out.push_back({"y", {OrderNC, {p.n, p.u}}});
    if (a.return_state) {
        out.push_back({"h", {OrderNC, {p.n, p.u}}});
        if (a.cell == Cell::lstm) out.push_back({"c", {OrderNC, {p.n, p.u}}});
    }
    return out;
}

std::optional<Order> order_rnn(const Operator&, const std::string& input) {
    if (input == "x") return OrderNTC;
    if (input == "b") return OrderC;
    if (input == "mask") return OrderNT;
    if (input == "h0" || input == "c0") return OrderNC;
    if (input == "peepholes") return OrderC;
    return OrderCN;
}

// ---- native kernels ---------------------------------------------------------------------------

/// Constant weights packed once, here, into the GEMM's panel layout (W for the input projection,
/// R for the step products); the pool comes with each run.
cpu::RnnPrepared prepare(native::BuildContext& b, const RnnAttrs& a, const graft_rt::RnnParams& p) {
    const Operator& op = b.op();
    cpu::RnnPrepared prep;
    const Variable& wv = *op.input("w");
    const Variable& rv = *op.input("r");
    const Variable* bv = op.input_or_null("b");
    auto data = [](const Variable& v) { return static_cast<const ConstantVariable&>(v).data().data(); };
    auto cst = [](const Variable& v) -> const ConstantVariable& { return static_cast<const ConstantVariable&>(v); };
    // Every block depends on the sizes and the cell only (not on the batch or the length): the
    // programs of one model share them.
    const std::string dims = std::to_string(a.gates) + "x" + std::to_string(p.u) + "x" + std::to_string(p.i);
    // The same condition as cpu::lstm's fused cell, which the split steps run.
    const bool default_acts = p.act.kind == graft_rt::Act::tanh && p.rec_act.kind == graft_rt::Act::sigmoid &&
                              !op.input_or_null("peepholes") && p.clip <= 0.f && !p.input_forget;
    // int8 or bf16 (LoadOptions::precision): W and R quantised (int8 per column) whole; the
    // products run cpu/gemm/qgemm. A GRU whose R is split in two products (no reset_after) keeps
    // R in fp32.
    const bool split = a.cell == Cell::gru && !a.reset_after;
    if (rv.is_constant()) {
        const auto& rd = cst(rv).data();
        prep.r_finite = std::all_of(rd.begin(), rd.end(), [](float v) { return std::isfinite(v); });
    }
    const Precision lowp = b.precision();
    const bool quantised = wv.is_constant() &&
                      (lowp == Precision::bf16 ||
                       (lowp == Precision::int8 && p.i <= cpu::gemm::kQMaxK && p.u <= cpu::gemm::kQMaxK));
    if (quantised) {
        const i64 gu = a.gates * p.u;
        prep.w_q = cpu::gemm::qpack_shared(b, cst(wv), p.i, gu, lowp);
        if (!split && rv.is_constant()) {
            prep.r_q = cpu::gemm::qpack_shared(b, cst(rv), p.u, gu, lowp);
            return prep;
        }
    }
    if (!quantised && a.cell == Cell::lstm && p.n == 1 && default_acts && p.u >= 64 && p.u % 8 == 0 && wv.is_constant() &&
        rv.is_constant() && (!bv || bv->is_constant())) {
        // Batch 1: each step split by units in slices (threads take whole slices), W, R and b
        // regrouped so that a slice's four gates are adjacent. Four slices where each keeps whole
        // 128-column blocks (the projection rides in them): one thread then runs a slice's cell
        // after its blocks, beside the next slice's (bench LSTM, 128 units: 0.7% faster than two).
        const int parts = p.u % 128 == 0 ? 4 : 2;
        const i64 g4 = 4 * p.u;
        auto order = [&](const Variable& v, i64 rows) {
            std::vector<float> out(static_cast<std::size_t>(rows * g4));
            cpu::rnn_lstm_part_order(data(v), rows, p.u, parts, out.data());
            return out;
        };
        prep.parts = parts;
        prep.w_packed = b.keep_shared(cst(wv), "lstm parts pack_b " + dims, [&] {
            const auto wo = order(wv, p.i);
            return cpu::gemm::pack_b(wo.data(), g4, p.i, g4);
        });
        prep.r_gemv = b.keep_shared(cst(rv), "lstm parts gemv_pack " + dims, [&] {
            const auto ro = order(rv, p.u);
            return cpu::gemm::gemv_pack(ro.data(), g4, p.u, g4);
        });
        if (bv) prep.b_parts = b.keep_shared(cst(*bv), "lstm parts bias " + dims, [&] { return order(*bv, 1); });
        return prep;
    }
    if (a.cell != Cell::gru && p.n >= 2 && wv.is_constant() && rv.is_constant() && !prep.w_q) {
        // Several rows, fp32: each step one product with [W; R] stacked (cpu::RnnPrepared::wr_packed).
        const std::string tag = "stacked pack_b " + dims + " with " + rv.name();  // depends on R as well
        prep.wr_packed = b.keep_shared(cst(wv), tag,
                                       [&] { return cpu::rnn_pack_stacked(data(wv), data(rv), p.i, p.u, a.gates); });
        return prep;
    }
    if (wv.is_constant() && !prep.w_q)
        prep.w_packed = b.keep_shared(cst(wv), "pack_b " + dims, [&] { return cpu::gemm::pack_b(data(wv), a.gates * p.u, p.i, a.gates * p.u); });
    if (rv.is_constant()) {
        // Panels for products of several rows; the matrix-vector layout when a thread may get a
        // single row (batch 1, or a small batch split over threads).
        auto pack = [&](bool gemv) {
            return b.keep_shared(cst(rv), std::string(gemv ? "recurrent gemv " : "recurrent panels ") + (split ? "split " : "") + dims,
                                 [&] { return cpu::rnn_pack_recurrent(data(rv), p.u, a.gates, split, gemv); });
        };
        if (p.n >= 2) prep.r_packed = pack(false);
        if (p.n <= 8) prep.r_gemv = pack(true);
    }
    return prep;
}

std::unique_ptr<native::Kernel> build_rnn(native::BuildContext& b) {
    const Operator& op = b.op();
    const auto a = RnnAttrs::parse(op);
    const auto p = a.params(op);
    const cpu::RnnPrepared prep = prepare(b, a, p);
    // The int8 / bf16 products' scratch follows the recurrent workspace.
    const i64 rnn_floats = cpu::rnn_work_floats(p, a.gates, prep);
    auto work = b.workspace(static_cast<std::size_t>(rnn_floats + (prep.w_q ? cpu::rnn_qwork(p) : 0)));
    auto x = b.in("x"), w = b.in("w"), r = b.in("r"), y = b.out("y");
    const auto bias = optional_in(b, "b"), mask = optional_in(b, "mask");
    const auto h0 = optional_in(b, "h0"), c0 = optional_in(b, "c0"), peep = optional_in(b, "peepholes");
    std::optional<native::Slot> h, cst;  // the optional outputs
    if (op.output_or_null("h")) h = b.out("h");
    if (op.output_or_null("c")) cst = b.out("c");
    auto with_pool = [prep, work, rnn_floats](const native::RunContext& c) {
        cpu::RnnPrepared q = prep;
        q.pool = c.pool;
        if (q.w_q) q.qwork = c.at(work) + rnn_floats;
        return q;
    };
    if (a.cell == Cell::lstm)
        return native::make_kernel([=](const native::RunContext& c) {
            cpu::lstm(c.at(x), c.at(w), c.at(r), at_or_null(c, bias), at_or_null(c, peep), c.at(y), at_or_null(c, h),
                      at_or_null(c, cst), p, c.at(work), at_or_null(c, h0), at_or_null(c, c0), at_or_null(c, mask),
                      with_pool(c));
        });
    if (a.cell == Cell::gru)
        return native::make_kernel([=, reset_after = a.reset_after](const native::RunContext& c) {
            cpu::gru(c.at(x), c.at(w), c.at(r), at_or_null(c, bias), reset_after, c.at(y), at_or_null(c, h), p,
                     c.at(work), at_or_null(c, h0), at_or_null(c, mask), with_pool(c));
        });
    return native::make_kernel([=](const native::RunContext& c) {
        cpu::simple_rnn(c.at(x), c.at(w), c.at(r), at_or_null(c, bias), c.at(y), at_or_null(c, h), p, c.at(work),
                        at_or_null(c, h0), at_or_null(c, mask), with_pool(c));
    });
}

// ---- C++ emitters -----------------------------------------------------------------------------

/// Columns [c0, c0 + n) of row-major m [K, N].
std::vector<float> columns(const std::vector<float>& m, i64 K, i64 N, i64 c0, i64 n) {
    std::vector<float> out(static_cast<std::size_t>(K * n));
    for (i64 k = 0; k < K; ++k)
        for (i64 j = 0; j < n; ++j)
            out[static_cast<std::size_t>(k * n + j)] = m[static_cast<std::size_t>(k * N + c0 + j)];
    return out;
}

void emit_rnn(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto a = RnnAttrs::parse(op);
    const auto p = a.params(op);
    const i64 U = p.u, G = a.gates;
    cpp::use(ctx, "recurrent");
    const std::string W = cpp::packed_weight(ctx, "w", p.i, G * U);
    std::string R, R_h = "nullptr";
    if (a.cell == Cell::gru && !a.reset_after) {
        const Variable& r = *op.input("r");
        if (!r.is_constant()) throw UnsupportedError(op.describe() + ": the recurrent kernel must be a constant");
        const auto& data = static_cast<const ConstantVariable&>(r).data();
        ctx.comment("r_zr / r_h: the recurrent kernel's z, r and h columns, packed (computed by graft)");
        R = ctx.constant("r_zr", cpp::pack_panels(columns(data, U, G * U, 0, 2 * U), U, 2 * U));
        R_h = ctx.constant("r_h", cpp::pack_panels(columns(data, U, G * U, 2 * U, U), U, U));
    } else {
        R = cpp::packed_weight(ctx, "r", U, G * U);
    }
    const std::string act = cpp::act_literal(ctx, p.act), rec = cpp::act_literal(ctx, p.rec_act);
    const std::string work = ctx.scratch(static_cast<std::size_t>(graft_rt::rnn_workspace(p, G)));
    cpp::emit_struct(ctx, "RnnParams", "p",
                     {{"n, t, i (input features), u (units)", cpp::csv({p.n, p.t, p.i, U})},
                      {"return_sequences", cpp::lit(p.return_sequences)},
                      {"go_backwards", cpp::lit(p.go_backwards)},
                      {"activation", act},
                      {"recurrent_activation", rec},
                      {"masked", cpp::lit(p.masked)},
                      {"zero_output_for_mask", cpp::lit(p.zero_output_for_mask)},
                      {"clip", cpp::lit(p.clip)},
                      {"input_forget", cpp::lit(p.input_forget)}});
    const std::string b = cpp::input_or_null(ctx, "b"), mask = cpp::input_or_null(ctx, "mask");
    const std::string h0 = cpp::input_or_null(ctx, "h0");
    auto out = [&](const char* n) { return op.output_or_null(n) ? ctx.output(n) : std::string("nullptr"); };
    if (a.cell == Cell::lstm)
        ctx.line("graft_rt::lstm({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, p, {}, {});", ctx.input("x"), W, R, b,
                 cpp::input_or_null(ctx, "peepholes"), h0, cpp::input_or_null(ctx, "c0"), ctx.output("y"), out("h"), out("c"),
                 work, mask);
    else if (a.cell == Cell::gru)
        ctx.line("graft_rt::gru({}, {}, {}, {}, {}, /*reset_after=*/{}, {}, {}, {}, p, {}, {});", ctx.input("x"), W, R,
                 R_h, b, a.reset_after, h0, ctx.output("y"), out("h"), work, mask);
    else
        ctx.line("graft_rt::simple_rnn({}, {}, {}, {}, {}, {}, {}, p, {}, {});", ctx.input("x"), W, R, b, h0,
                 ctx.output("y"), out("h"), work, mask);
}

}  // namespace

void register_recurrent(Registry& r) {
    for (const char* type : {kSimpleRNN, kLSTM, kGRU}) {
        const bool lstm = type == std::string(kLSTM);
        std::vector<std::string> inputs{"x", "w", "r", "b?", "mask?", "h0?"};
        if (lstm) inputs.insert(inputs.end(), {"c0?", "peepholes?"});
        OpDef(type, inputs, infer_rnn,
              std::string("recurrent layer over x NTC; attrs units, activation, recurrent_activation, return_sequences, "
                          "return_state, go_backwards, clip (GRU: reset_after") +
                  (lstm ? "; input_forget" : "") +
                  "); optional Keras mask NT (attr zero_output_for_mask), initial state h0 NC" +
                  (lstm ? ", c0 NC, peepholes C [3*units] (i, f, o)" : ""))
            .required_order(order_rnn)
            .add(r, build_rnn, emit_rnn);
    }
}

}  // namespace graft::ops
