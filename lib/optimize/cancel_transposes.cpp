// Pass cancel_transposes: a Transpose reading a Transpose reads the first one's input instead
// (orders compose by axis name, so T(T(x, a), b) = T(x, b)); if that makes it a Transpose to
// the order x already has, remove_noops takes it away, and dead_ops the first one if unread.
#include "ops/op_types.hpp"
#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

bool cancel_transposes(Graph& g, const Registry&) {
    bool changed = false;
    for (Operator* t : g.topological_order()) {
        if (t->type() != ops::kTranspose) continue;
        Variable* y = t->output("y");
        Variable* x = t->input("x");
        if (x->order() == y->order() && x->shape() == y->shape()) {
            bypass(g, t, y, x);
            changed = true;
            continue;
        }
        Operator* first = x->producer();
        if (!first || first->type() != ops::kTranspose) continue;
        Variable* src = first->input("x");
        if (src->order() == y->order()) {
            bypass(g, t, y, src);
        } else {
            g.set_input(t, "x", src);
        }
        changed = true;
    }
    return finish_pass(g, changed);
}


}  // namespace graft::optimize::passes
