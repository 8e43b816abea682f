// C++ emitters: SimpleRNN, LSTM, GRU (with Keras masks).
#include "ops/emit_util.hpp"
#include "ops/legacy_families.hpp"

namespace graft::cpp {

namespace {

using i64 = std::int64_t;

/// Columns [c0, c0 + n) of row-major m [K, N].
std::vector<float> columns(const std::vector<float>& m, i64 K, i64 N, i64 c0, i64 n) {
    std::vector<float> out(static_cast<std::size_t>(K * n));
    for (i64 k = 0; k < K; ++k)
        for (i64 j = 0; j < n; ++j) out[static_cast<std::size_t>(k * n + j)] = m[static_cast<std::size_t>(k * N + c0 + j)];
    return out;
}

void emit_rnn(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const std::string& type = op.type();
    const i64 G = type == "LSTM" ? 4 : type == "GRU" ? 3 : 1;
    const i64 N = x.size(Axis::N), T = x.size(Axis::T), I = x.size(Axis::C), U = op.attr<i64>("units");
    const bool masked = op.has_input("mask"), reset_after = op.attr_or<bool>("reset_after", false);
    use(ctx, "rnn");
    const std::string W = packed_weight(ctx, "w", I, G * U);
    std::string R, R_h = "nullptr";
    if (type == "GRU" && !reset_after) {
        const Variable& r = *op.input("r");
        if (!r.is_constant()) throw UnsupportedError(op.describe() + ": the recurrent kernel must be a constant");
        const auto& data = static_cast<const ConstantVariable&>(r).data();
        ctx.comment("r_zr / r_h: the recurrent kernel's z, r and h columns, packed (computed by graft)");
        R = ctx.constant("r_zr", pack_panels(columns(data, U, G * U, 0, 2 * U), U, 2 * U));
        R_h = ctx.constant("r_h", pack_panels(columns(data, U, G * U, 2 * U, U), U, U));
    } else {
        R = packed_weight(ctx, "r", U, G * U);
    }
    const std::string act = act_expr(ctx, op.attr_or<std::string>("activation", "tanh"));
    const std::string rec = act_expr(ctx, op.attr_or<std::string>("recurrent_activation", "sigmoid"));
    const std::string work = ctx.scratch(static_cast<std::size_t>(N * T * G * U + N * G * U + (masked ? 6 : 3) * N * U));
    emit_struct(ctx, "Rnn", "p",
                {{"n, t, i (input features), u (units)", csv({N, T, I, U})},
                 {"return_sequences", lit(op.attr_or<bool>("return_sequences", false))},
                 {"go_backwards", lit(op.attr_or<bool>("go_backwards", false))},
                 {"activation", act},
                 {"recurrent_activation", rec},
                 {"masked", lit(masked)},
                 {"zero_output_for_mask", lit(op.attr_or<bool>("zero_output_for_mask", false))}});
    const std::string b = input_or_null(ctx, "b"), mask = input_or_null(ctx, "mask");
    auto out = [&](const char* n) { return op.output_or_null(n) ? ctx.output(n) : std::string("nullptr"); };
    if (type == "LSTM")
        ctx.line("graft_rt::lstm({}, {}, {}, {}, {}, {}, {}, p, {}, {});", ctx.input("x"), W, R, b, ctx.output("y"), out("h"),
                 out("c"), work, mask);
    else if (type == "GRU")
        ctx.line("graft_rt::gru({}, {}, {}, {}, {}, /*reset_after=*/{}, {}, {}, p, {}, {});", ctx.input("x"), W, R, R_h, b,
                 reset_after, ctx.output("y"), out("h"), work, mask);
    else
        ctx.line("graft_rt::simple_rnn({}, {}, {}, {}, {}, {}, p, {}, {});", ctx.input("x"), W, R, b, ctx.output("y"), out("h"),
                 work, mask);
}

}  // namespace

void register_sequence_emitters(Registry& r) {
    for (const char* t : {"SimpleRNN", "LSTM", "GRU"}) r.add_generator<cpp::Backend>(t, emit_rnn);
}

}  // namespace graft::cpp
