// Pass fuse_activation: Activation(P(x)) becomes P(x) with the activation as P's epilogue, when
// P's schema says it takes one (activation_epilogue), P has none yet (or a linear one), and P's
// output is read by the Activation alone.
#include "ops/op_types.hpp"
#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

Operator* epilogue_producer(const Graph& g, const Registry& reg, const Operator& act) {
    if (act.type() != ops::kActivation) return nullptr;
    Variable* x = act.input("x");
    Operator* p = x->producer();
    if (!p || p->outputs().size() != 1 || p->output_or_null("y") != x || !only_read_by(g, x, &act)) return nullptr;
    const OpSchema* s = reg.find_op(p->type());
    if (!s || !s->activation_epilogue) return nullptr;
    return p->attr_or<std::string>("activation", "linear") == "linear" ? p : nullptr;
}

namespace {

const char* const kActAttrs[] = {"activation", "alpha", "max_value", "threshold"};

}  // namespace

bool fuse_activation(Graph& g, const Registry& reg) {
    bool changed = false;
    for (Operator* act : g.topological_order()) {
        Operator* p = epilogue_producer(g, reg, *act);
        if (!p) continue;
        Variable* x = act->input("x");
        for (const char* k : kActAttrs) p->attrs().erase(k);
        for (const char* k : kActAttrs)
            if (act->attrs().has(k)) p->attrs().set_value(k, act->attrs().all().at(k));
        bypass(g, act, act->output("y"), x);
        changed = true;
    }
    return finish_pass(g, changed);
}


}  // namespace graft::optimize::passes
