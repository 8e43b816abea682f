// Pass fold_bias_add: y = Binary(add, P(x), c) (or sub, P(x) first) where P's schema
// folds_channel_scale (Linear, Conv: the output channel is the last axis of P's output, an
// optional bias b in order C) and c is a constant that varies along that channel axis at most
// becomes P'(x) with b' = b + c (b - c for sub). ONNX exporters write a Linear layer on a 3-D
// input as MatMul then Add, and a convolution without a bias then an Add; folded, the bias costs
// no pass over the output and an activation after it can move into P's epilogue.
// It fires only when P has no activation epilogue and no residual input, P's weights and bias are
// constants, c has no axis P's output lacks (the sum would be larger than P's output), and P's
// output is read by the Binary alone. When the Binary wrote the sum in another memory order than
// P's output, a Transpose takes its place, so every reader (and a graph output) keeps its layout.
#include "ops/op_types.hpp"
#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

namespace {

/// c's values as one per output channel (`units` of them), or empty if c varies along another
/// axis of y, has an axis y lacks, or does not match y's channel count.
std::vector<float> per_channel(const ConstantVariable& c, const Variable& y, std::int64_t units) {
    const Axis channel = y.order().axes().back();
    bool along_channel = false;
    for (std::size_t i = 0; i < c.order().ndim(); ++i) {
        const Axis a = c.order().axes()[i];
        if (!y.order().has(a)) return {};
        if (c.shape()[i] == 1) continue;
        if (a != channel || c.shape()[i] != units) return {};
        along_channel = true;
    }
    if (along_channel) return c.data();
    if (c.data().size() != 1) return {};
    return std::vector<float>(static_cast<std::size_t>(units), c.data()[0]);
}

}  // namespace

bool fold_bias_add(Graph& g, const Registry& reg) {
    bool changed = false;
    for (Operator* add : g.topological_order()) {
        if (add->type() != ops::kBinary) continue;
        const auto kind = add->attr<std::string>("op");
        if (kind != "add" && kind != "sub") continue;
        for (const char* port : {"a", "b"}) {
            Variable* y = add->input(port);
            Operator* p = y->producer();
            const auto* c = as_constant(add->input(port[0] == 'a' ? "b" : "a"));
            if (!p || !c || (kind == "sub" && port[0] != 'a')) continue;
            const OpSchema* s = reg.find_op(p->type());
            if (!s || !s->folds_channel_scale || p->outputs().size() != 1 || !only_read_by(g, y, add)) continue;
            if (p->attr_or<std::string>("activation", "linear") != "linear" || p->has_input("r")) continue;
            const auto* w = as_constant(p->input("w"));
            const auto* b = as_constant(p->input_or_null("b"));
            if (!w || (p->has_input("b") && !b) || w->order().ndim() < 1) continue;
            const std::int64_t units = w->shape().back();
            std::vector<float> bias = per_channel(*c, *y, units);
            if (bias.empty() || (b && b->data().size() != bias.size())) continue;
            for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = (b ? b->data()[i] : 0.0f) + (kind == "sub" ? -bias[i] : bias[i]);
            auto* nb = new_constant(g, (b ? b->name() : p->name() + "/bias") + "/add", OrderC, {units}, std::move(bias));
            set_bias(g, p, b, nb);
            Variable* sum = add->output("y");
            if (sum->order() == y->order()) {
                bypass(g, add, sum, y);
            } else {  // the Binary laid the sum out in its own order: a Transpose keeps it there
                const std::string name = add->name(), layer = add->layer();
                Attributes a;
                a.set("order", sum->order());
                g.remove_op(add);
                g.add_op(ops::kTranspose, name, {{"x", y}}, {{"y", sum}}, std::move(a))->set_layer(layer);
            }
            changed = true;
            break;
        }
    }
    return finish_pass(g, changed);
}

}  // namespace graft::optimize::passes
