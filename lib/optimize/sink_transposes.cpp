// Pass sink_transposes: z -Transpose-> a -E1-> ... -Ek-> b -Transpose-> c, where the second
// Transpose restores z's order and E1..Ek are order-agnostic elementwise ops each read by the
// next alone, becomes z -E1-> ... -Ek-> c: the chain runs in z's layout and both transposes go. E qualifies when its schema is `inplace` (same shape in and out)
// without a required order, it has one output, and every input but the first is a 1-D constant
// (a per-axis parameter, like BatchNormalization's or BiasAdd's, which names its axis).
#include "ops/op_types.hpp"
#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

namespace {

bool order_agnostic(const Operator& op, const Registry& reg) {
    const OpSchema* s = reg.find_op(op.type());
    if (!s || !s->inplace || s->required_order || op.outputs().size() != 1 || op.inputs().empty()) return false;
    for (std::size_t i = 1; i < op.inputs().size(); ++i) {
        const Variable* v = op.inputs()[i].second;
        if (!v->is_constant() || v->ndim() != 1) return false;
    }
    return true;
}

}  // namespace

bool sink_transposes(Graph& g, const Registry& reg) {
    bool changed = false;
    for (Operator* t2 : g.topological_order()) {
        if (t2->type() != ops::kTranspose) continue;
        // Walk back from t2 through a chain of order-agnostic ops, each read by the next alone.
        std::vector<Operator*> chain;  // last op first
        Variable* v = t2->input("x");
        Operator* t1 = nullptr;
        for (const Operator* reader = t2;;) {
            Operator* p = v->producer();
            if (!p || !only_read_by(g, v, reader)) break;
            if (p->type() == ops::kTranspose) {
                if (!chain.empty()) t1 = p;
                break;
            }
            if (!order_agnostic(*p, reg)) break;
            chain.push_back(p);
            reader = p;
            v = p->inputs().front().second;
        }
        if (!t1) continue;
        Variable* z = t1->input("x");
        Variable* c = t2->output("y");
        if (z->order() != c->order()) continue;
        // Retype the chain in z's order, first op first; undo if an op is not shape-preserving.
        std::vector<std::pair<Variable*, TensorType>> saved;
        bool ok = true;
        Operator* first = chain.back();
        g.set_input(first, first->inputs().front().first, z);
        for (auto it = chain.rbegin(); it != chain.rend() && ok; ++it) {
            auto types = reg.op((*it)->type()).infer(**it);
            Variable* y = (*it)->outputs().front().second;
            ok = types.size() == 1 && types.front().second.order == z->order();
            if (!ok) break;
            saved.push_back({y, {y->order(), y->shape(), y->dtype()}});
            y->set_type(types.front().second.order, types.front().second.shape);
        }
        if (!ok) {
            for (auto& [y, t] : saved) y->set_type(t.order, t.shape);
            g.set_input(first, first->inputs().front().first, t1->output("y"));
            continue;
        }
        bypass(g, t2, c, chain.front()->outputs().front().second);
        g.remove_op(t1);
        changed = true;
        break;  // the topological order is stale now; the group runs this pass again
    }
    return finish_pass(g, changed);
}


}  // namespace graft::optimize::passes
