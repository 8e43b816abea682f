// Keras Embedding (mask_zero) and Masking: the sources of Keras masks.
//
// Masks: a masked tensor is a Value whose `mask` is a float 0/1 variable over its batch and time
// axes (NT). Embedding(mask_zero=True) on (batch, time) indices masks the steps whose index is 0
// (Keras compares the raw input with 0); Masking on (batch, time, features) masks the steps whose
// features all equal mask_value and zeroes them. Only SimpleRNN, LSTM and GRU consume masks
// (recurrent.cpp), also inside Bidirectional; TimeDistributed passes them on (wrappers.cpp); any
// other layer reading a masked tensor is refused by the converter.
//
// Indices arrive as float32 (Keras 2 casts them to int32, truncating toward zero). An index
// outside [0, input_dim) cannot raise at run time (kernels do not throw): it yields a row of
// zeros, and the table is never read out of bounds.
#include "frontend/keras/layers/layers.hpp"
#include "ops/op_types.hpp"

namespace graft::keras {

namespace {

void embedding(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const auto& c = ctx.config();
    const std::string dim_key = c.first_of({"output_dim"});
    if (dim_key.empty()) c.fail("config has no 'output_dim'");
    const std::int64_t V = c.get_size("input_dim"), D = c.get_size("output_dim");
    checked::product(ctx.where(), "table input_dim * output_dim", {V, D});
    ctx.expect_weights(1);
    // Output axes: the input's positions plus a feature axis last, named as Keras positions.
    const Order out = positional_order(ctx.input(0).logical.ndim() + 1);
    std::vector<Axis> in_axes(out.axes().begin(), out.axes().end() - 1);
    const Value x = ctx.relabel(ctx.input(0), Order(in_axes));
    Attributes a;
    a.set("axis", out.back());
    NamedVars ins{{"x", x.var}, {"table", ctx.constant(ctx.weight(0), OrderCN, {V, D})}};
    Value y{ctx.op(ops::kEmbedding, std::move(ins), std::move(a))->output("y"), out};
    if (c.get_bool("mask_zero", false)) {
        if (in_axes.size() != 2)
            ctx.fail_unsupported("mask_zero=True on an input of rank " + std::to_string(in_axes.size()) +
                                 " (graft propagates masks over (batch, time) only)");
        const Value xt = ctx.relabel(x, OrderNT);
        y.mask = ctx.op(ops::kNonZeroMask, {{"x", xt.var}}, {}, "mask")->output("mask");
    }
    ctx.set_outputs({y});
}

void masking(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    if (ctx.input(0).logical.ndim() != 3)
        ctx.fail_unsupported("Masking on an input of rank " + std::to_string(ctx.input(0).logical.ndim()) +
                             " (graft supports (batch, time, features))");
    const Value x = ctx.relabel(ctx.input(0), OrderNTC);
    Attributes a;
    a.set("axis", Axis::C);
    a.set("mask_value", ctx.config().get_float("mask_value", 0.0));
    Operator* op = ctx.op(ops::kMasking, {{"x", x.var}}, std::move(a));
    ctx.set_outputs({Value{op->output("y"), OrderNTC, op->output("mask")}});
}

}  // namespace

void register_embedding(Registry& r) {
    r.add_converter("keras", "Embedding", embedding);
    r.add_converter("keras", "Masking", masking);
}

}  // namespace graft::keras
