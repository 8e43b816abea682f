// Keras merge layers: Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate.
#include "frontend/keras/layers/layers.hpp"

namespace graft::keras {

namespace {

/// Inputs with the first one's logical axis names, as x0, x1, ...
NamedVars aligned_inputs(LayerContext& ctx) {
    NamedVars ins;
    const Order& first = ctx.input(0).logical;
    for (std::size_t i = 0; i < ctx.num_inputs(); ++i)
        ins.emplace_back("x" + std::to_string(i), ctx.relabel(ctx.input(i), first).var);
    return ins;
}

void merge(LayerContext& ctx, const char* op) {
    ctx.expect_inputs(std::string(op) == "sub" ? 2 : 1, std::string(op) == "sub" ? 2 : 64);
    Attributes a;
    a.set("op", op);
    set_output(ctx, ctx.op("Merge", aligned_inputs(ctx), std::move(a))->output("y"), ctx.input(0).logical);
}

void concatenate(LayerContext& ctx) {
    ctx.expect_inputs(1, 64);
    const Value& x0 = ctx.input(0);
    Attributes a;
    a.set("axis", keras_axis(ctx, x0, ctx.config().get_int("axis", -1)));
    set_output(ctx, ctx.op("Concat", aligned_inputs(ctx), std::move(a))->output("y"), x0.logical);
}

}  // namespace

void register_merge(Registry& r) {
    static const std::pair<const char*, const char*> kinds[] = {{"Add", "add"},         {"Subtract", "sub"},
                                                               {"Multiply", "mul"},    {"Average", "avg"},
                                                               {"Maximum", "max"},     {"Minimum", "min"}};
    for (auto& [cls, op] : kinds) {
        std::string o = op;
        r.add_converter("keras", cls, [o](LayerContext& c) { merge(c, o.c_str()); });
    }
    r.add_converter("keras", "Concatenate", concatenate);
}

}  // namespace graft::keras
