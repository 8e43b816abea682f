// Pass fuse_residual: Add(P(x), r) becomes P(x, r) when P's schema takes a residual input "r?"
// (added after the bias and before the activation, as in a ResNet block: conv -> BN -> add ->
// ReLU). It fires when the Add is a two-input Merge "add" of one shape and order, P has no
// activation and no residual yet, and P's output is read by the Add alone. fuse_activation then
// moves the ReLU after the Add into P's epilogue, so the block's tail is one pass over memory.
#include <algorithm>

#include "ops/op_types.hpp"
#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

namespace {

bool takes_residual(const Registry& reg, const Operator& p) {
    const OpSchema* s = reg.find_op(p.type());
    return s && s->activation_epilogue && std::find(s->inputs.begin(), s->inputs.end(), "r?") != s->inputs.end();
}

/// P of `x` when Add(x, other) can become P(..., r = other); null otherwise.
Operator* fusable(const Graph& g, const Registry& reg, const Operator& add, Variable* x, const Variable* other) {
    Operator* p = x->producer();
    if (!p || p->outputs().size() != 1 || p->output_or_null("y") != x || !only_read_by(g, x, &add)) return nullptr;
    if (!takes_residual(reg, *p) || p->has_input("r")) return nullptr;
    if (p->attr_or<std::string>("activation", "linear") != "linear") return nullptr;
    if (other == x || other->order() != x->order() || other->shape() != x->shape()) return nullptr;
    return p;
}

}  // namespace

bool fuse_residual(Graph& g, const Registry& reg) {
    bool changed = false;
    for (Operator* add : g.topological_order()) {
        if (add->type() != ops::kMerge || add->attr_or<std::string>("op", "") != "add" || add->inputs().size() != 2) continue;
        Variable* a = add->inputs()[0].second;
        Variable* b = add->inputs()[1].second;
        // Prefer the later producer, so the residual (usually the block's shortcut) is ready early.
        Variable* x = b;
        Variable* r = a;
        Operator* p = fusable(g, reg, *add, b, a);
        if (!p) {
            x = a, r = b;
            p = fusable(g, reg, *add, a, b);
        }
        if (!p) continue;
        add_input(g, p, "r", r);
        bypass(g, add, add->output("y"), x);
        changed = true;
    }
    return finish_pass(g, changed);
}


}  // namespace graft::optimize::passes
