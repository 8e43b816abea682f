// Keras SimpleRNN, LSTM and GRU (return_sequences, return_state, go_backwards; GRU reset_after
// both ways; initial states given as inputs; unroll is ignored, it changes nothing at inference;
// stateful is refused). Keras 2+
// weights are (kernel, recurrent_kernel, bias) whatever the naming (Keras 2 "lstm_1/kernel:0",
// tf.keras "lstm/lstm_cell/kernel:0", Keras 3 "lstm/lstm_cell/kernel"); Keras 1 stores one array
// per gate (LSTM: W/U/b for i, c, f, o; GRU: z, r, h), which are joined here into the Keras 2
// layout, as Keras 2's own loader does (keras/engine/saving.py preprocess_weights_for_loading).
#include "frontend/keras/layers/layers.hpp"

namespace graft::keras {

namespace {

struct Gates {
    std::vector<float> w, r, b;
};

/// Joins Keras 1 per-gate arrays, given in `file_order` (e.g. "icfo"), into Keras 2 column blocks
/// in `keras2_order` (e.g. "ifco").
Gates join_keras1(LayerContext& ctx, const std::string& file_order, const std::string& keras2_order, std::int64_t in,
                  std::int64_t units) {
    const std::size_t g = file_order.size();
    ctx.expect_weights(3 * g);
    for (std::size_t k = 0; k < g; ++k) {  // every shape checked before anything is allocated
        const WeightArray& W = ctx.weight(3 * k), &U = ctx.weight(3 * k + 1), &B = ctx.weight(3 * k + 2);
        if (W.shape != Shape{in, units} || U.shape != Shape{units, units} || B.shape != Shape{units})
            ctx.fail_shape("Keras 1 gate weights '" + W.name + "', '" + U.name + "', '" + B.name + "' have shapes " +
                           shape_str(W.shape) + ", " + shape_str(U.shape) + ", " + shape_str(B.shape) + ", expected " +
                           shape_str({in, units}) + ", " + shape_str({units, units}) + ", " + shape_str({units}));
    }
    Gates out;
    out.w.resize(static_cast<std::size_t>(in * static_cast<std::int64_t>(g) * units));
    out.r.resize(static_cast<std::size_t>(units * static_cast<std::int64_t>(g) * units));
    out.b.resize(g * static_cast<std::size_t>(units));
    for (std::size_t k = 0; k < g; ++k) {
        const std::size_t col = keras2_order.find(file_order[k]) * static_cast<std::size_t>(units);
        const WeightArray& W = ctx.weight(3 * k), &U = ctx.weight(3 * k + 1), &B = ctx.weight(3 * k + 2);
        const auto G = static_cast<std::size_t>(g * units), U_ = static_cast<std::size_t>(units);
        for (std::size_t i = 0; i < static_cast<std::size_t>(in); ++i)
            for (std::size_t j = 0; j < U_; ++j) out.w[i * G + col + j] = (*W.data)[i * U_ + j];
        for (std::size_t i = 0; i < U_; ++i)
            for (std::size_t j = 0; j < U_; ++j) out.r[i * G + col + j] = (*U.data)[i * U_ + j];
        for (std::size_t j = 0; j < U_; ++j) out.b[col + j] = (*B.data)[j];
    }
    return out;
}

void recurrent(LayerContext& ctx, const std::string& type) {
    const auto& c = ctx.config();
    if (c.get_bool("stateful", false))
        ctx.fail_unsupported("stateful recurrent layers keep state between calls, which graft does not model; "
                             "re-save the model with stateful=False");
    // The sequence, then the initial states Keras was called with (initial_state=[h0] or, for an
    // LSTM, [h0, c0]): all of them or none.
    const std::size_t states = type == "LSTM" ? 2 : 1;
    if (ctx.num_inputs() != 1 && ctx.num_inputs() != 1 + states)
        ctx.fail_format("takes the sequence and " + std::to_string(states) + " initial state" + (states > 1 ? "s" : "") +
                        " or the sequence alone, but is called with " + std::to_string(ctx.num_inputs()) + " inputs");
    const std::string units_key = c.first_of({"units", "output_dim"});
    if (units_key.empty()) c.fail("config has no 'units'");
    const std::int64_t u = c.get_size(units_key.c_str());
    const std::int64_t g = type == "LSTM" ? 4 : type == "GRU" ? 3 : 1;
    const Value x = ctx.relabel(ctx.input(0), OrderNTC);
    const std::int64_t in = x.var->size(Axis::C);
    // The kernels' sizes from the config alone, before any weight is looked at.
    checked::product(ctx.where(), "kernel of " + units_key, {in, g, u});
    checked::product(ctx.where(), "recurrent kernel of " + units_key, {u, g, u});
    const bool reset_after = type == "GRU" && c.get_bool("reset_after", false);
    if (c.get_bool("time_major", false)) ctx.fail_unsupported("time_major=True (inputs laid out (T, N, C)) is not supported");
    // Keras 1 stores one W/U/b triple per gate (LSTM: 12 arrays); with consume_less='gpu' it
    // stores the Keras 2 layout (W, U, b with the gates side by side), which reads as Keras 2.
    const bool keras1 = ctx.framework_version().rfind("1.", 0) == 0 && g > 1 && ctx.num_weights() == static_cast<std::size_t>(3 * g);

    NamedVars ins{{"x", x.var}};
    if (keras1) {
        Gates k = type == "LSTM" ? join_keras1(ctx, "icfo", "ifco", in, u) : join_keras1(ctx, "zrh", "zrh", in, u);
        ins.emplace_back("w", ctx.constant(ctx.layer_name() + "/kernel", OrderCN, {in, g * u}, std::move(k.w)));
        ins.emplace_back("r", ctx.constant(ctx.layer_name() + "/recurrent_kernel", OrderCN, {u, g * u}, std::move(k.r)));
        ins.emplace_back("b", ctx.constant(ctx.layer_name() + "/bias", OrderC, {g * u}, std::move(k.b)));
    } else {
        const bool use_bias = c.get_bool("use_bias", true);  // Keras 1 has no use_bias: always a bias
        ctx.expect_weights(use_bias ? 3 : 2);
        ins.emplace_back("w", ctx.constant(ctx.weight(0), OrderCN, {in, g * u}));
        ins.emplace_back("r", ctx.constant(ctx.weight(1), OrderCN, {u, g * u}));
        if (use_bias) {
            const WeightArray& b = ctx.weight(2);
            const Shape want = reset_after ? Shape{2, g * u} : Shape{g * u};
            if (b.shape != want) ctx.fail_shape("weight '" + b.name + "' has shape " + shape_str(b.shape) + ", expected " + shape_str(want));
            ins.emplace_back("b", ctx.graph().add_constant(ctx.graph().unique_name(b.name), OrderC, {numel(want)}, b.data));
        }
    }
    for (std::size_t i = 1; i < ctx.num_inputs(); ++i) {
        const Value& st = ctx.input(i);
        if (st.logical.ndim() != 2 || st.var->size(st.logical[1]) != u)
            ctx.fail_shape("initial state " + std::to_string(i - 1) + " " + st.var->describe() + " should be (batch, " +
                           std::to_string(u) + ")");
        ins.emplace_back(i == 1 ? "h0" : "c0", ctx.relabel(st, OrderNC).var);
    }
    Attributes a;
    if (ctx.input(0).mask) {  // Keras mask (Embedding mask_zero / Masking): skipped steps keep the state
        ctx.consume_masks();
        ins.emplace_back("mask", ctx.input(0).mask);
        a.set("zero_output_for_mask", c.get_bool("zero_output_for_mask", false));
    }
    a.set("units", u);
    a.set("activation", activation_name(ctx, c.get_string("activation", "tanh")));
    a.set("recurrent_activation",
          activation_name(ctx, c.get_string(c.first_of({"recurrent_activation", "inner_activation"}).c_str(), "hard_sigmoid")));
    a.set("return_sequences", c.get_bool("return_sequences", false));
    a.set("return_state", c.get_bool("return_state", false));
    a.set("go_backwards", c.get_bool("go_backwards", false));
    if (type == "GRU") a.set("reset_after", reset_after);
    Operator* op = ctx.op(type, std::move(ins), std::move(a));
    std::vector<Value> outs{{op->output("y"), op->output("y")->order()}};
    if (c.get_bool("return_sequences", false)) outs[0].mask = ctx.input(0).mask;  // Keras passes the mask on
    if (auto* h = op->output_or_null("h")) outs.push_back({h, OrderNC});
    if (auto* cs = op->output_or_null("c")) outs.push_back({cs, OrderNC});
    ctx.set_outputs(std::move(outs));
}

}  // namespace

void register_recurrent(Registry& r) {
    for (const char* type : {"SimpleRNN", "LSTM", "GRU"}) {
        std::string t = type;
        r.add_converter("keras", type, [t](LayerContext& c) { recurrent(c, t); });
    }
}

}  // namespace graft::keras
