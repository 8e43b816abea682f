// Pass remove_noops: inference no-ops go: ops whose schema says they compute y = x for their
// attributes (OpSchema::is_noop: Identity, a linear Activation, a Merge of one input, a Reshape
// that keeps order and shape, a Transpose to the order its input already has).
#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

namespace {

bool same_type(const Variable& x, const Variable& y) { return x.order() == y.order() && x.shape() == y.shape() && x.dtype() == y.dtype(); }

bool is_noop(const Operator& op, const Registry& reg) {
    const auto& t = op.type();
    if (op.inputs().size() != 1 || op.outputs().size() != 1) return false;
    const Variable& x = *op.inputs().front().second;
    const Variable& y = *op.outputs().front().second;
    if (!same_type(x, y)) return false;
    if (const OpSchema* s = reg.find_op(t); s && s->is_noop && s->is_noop(op)) return true;
    return false;
}

}  // namespace

bool remove_noops(Graph& g, const Registry& reg) {
    bool changed = false;
    for (Operator* op : g.topological_order()) {
        if (!is_noop(*op, reg)) continue;
        bypass(g, op, op->outputs().front().second, op->inputs().front().second);
        changed = true;
    }
    return finish_pass(g, changed);
}


}  // namespace graft::optimize::passes
