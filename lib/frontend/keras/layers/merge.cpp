// Keras merge layers: Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot (axes,
// normalize; Keras batch_dot: x's other axes, then y's, a 2-D result of rank 1 gets a unit axis).
#include <algorithm>

#include "frontend/keras/layers/layers.hpp"
#include "ops/op_types.hpp"

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
    set_output(ctx, ctx.op(ops::kMerge, aligned_inputs(ctx), std::move(a))->output("y"), ctx.input(0).logical);
}

void concatenate(LayerContext& ctx) {
    ctx.expect_inputs(1, 64);
    const Value& x0 = ctx.input(0);
    Attributes a;
    a.set("axis", keras_axis(ctx, x0, ctx.config().get_int("axis", -1)));
    set_output(ctx, ctx.op(ops::kConcat, aligned_inputs(ctx), std::move(a))->output("y"), x0.logical);
}

void dot(LayerContext& ctx) {
    ctx.expect_inputs(2, 2);
    Value x = ctx.input(0), y = ctx.input(1);
    auto axes = ctx.config().get_ints("axes");
    if (axes.size() == 1) axes.push_back(axes[0]);
    if (axes.size() != 2) ctx.fail_format("'axes' should be an integer or a list of two");
    const auto rx = static_cast<std::int64_t>(x.logical.ndim()), ry = static_cast<std::int64_t>(y.logical.ndim());
    if (rx < 2 || ry < 2) ctx.fail_shape("Dot needs inputs of rank 2 or more");
    // Keras: a negative int axis counts from the end of each input separately
    const Axis ax = keras_axis(ctx, x, axes[0]), ay = keras_axis(ctx, y, axes[1]);
    // Both inputs must share the batch axis name for the product; give y x's batch name.
    if (y.logical[0] != x.logical[0]) {
        std::vector<Axis> ren = y.logical.axes();
        ren[0] = x.logical[0];
        if (std::count(ren.begin(), ren.end(), x.logical[0]) > 1) ctx.fail_unsupported("input axes named like the batch axis");
        y = ctx.relabel(y, Order(ren));
    }
    if (ctx.config().get_bool("normalize", false)) {
        for (auto* v : {&x, &y}) {
            Attributes a;
            a.set("axes", std::vector<std::string>{(v == &x ? ax : ay).name()});
            a.set("epsilon", 1e-12);
            v->var = ctx.op(ops::kL2Normalize, {{"x", v->var}}, std::move(a), v == &x ? "normalize_x" : "normalize_y")->output("y");
        }
    }
    const std::size_t out_rank = static_cast<std::size_t>(rx + ry - 3);
    const Order out = positional_order(std::max<std::size_t>(out_rank, 2));
    Attributes a;
    a.set("batch", x.logical[0]);
    a.set("x_axis", ax);
    a.set("y_axis", ay);
    a.set("out_order", out_rank == 1 ? Order{out[0]} : out);
    // Keras' order of the free axes: the logical one, whatever the memory order of the inputs.
    for (const auto* v : {&x, &y}) {
        std::vector<std::string> names;
        for (const auto& ax_ : v->logical.axes())
            if (ax_ != x.logical[0] && ax_ != (v == &x ? ax : ay)) names.push_back(ax_.name());
        a.set(v == &x ? "x_free" : "y_free", names);
    }
    Variable* r = ctx.op(ops::kBatchMatMul, {{"x", x.var}, {"y", y.var}}, std::move(a))->output("y");
    if (out_rank == 1) {  // Keras expands a rank-1 batch_dot result to (batch, 1)
        Attributes ra;
        ra.set("in_order", Order{out[0]});
        ra.set("out_order", out);
        ra.set("shape", Shape{kDynamic, 1});
        r = ctx.op(ops::kReshape, {{"x", r}}, std::move(ra), "expand")->output("y");
    }
    set_output(ctx, r, out);
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
    r.add_converter("keras", "Dot", dot);
}

}  // namespace graft::keras
