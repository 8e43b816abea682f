// Rule remove_noops: inference no-ops go: an op with one input and one output of the same type
// whose schema says it computes y = x for its attributes (OpSchema::is_noop: a Reshape that keeps
// order and shape, a Transpose to the order its input already has), Identity (Dropout and noise
// layers), a linear Activation and a Merge of one input (except subtract, which needs two).
#include "optimize/rules.hpp"

namespace graft::optimize::rules {

namespace {

bool same_type(const Variable& x, const Variable& y) { return x.order() == y.order() && x.shape() == y.shape() && x.dtype() == y.dtype(); }

bool is_noop(const Operator& op, const Registry& reg) {
    const auto& t = op.type();
    if (op.inputs().size() != 1 || op.outputs().size() != 1) return false;
    const Variable& x = *op.inputs().front().second;
    const Variable& y = *op.outputs().front().second;
    if (!same_type(x, y)) return false;
    const OpSchema* schema = reg.find_op(t);
    if (schema && schema->is_noop && schema->is_noop(op)) return true;
    if (t == "Identity") return true;
    if (t == "Activation") return op.attr_or<std::string>("activation", "") == "linear";
    if (t == "Merge") return op.attr_or<std::string>("op", "") != "sub";
    return false;
}

bool run(Graph& g, const Registry& reg) {
    bool changed = false;
    for (Operator* op : g.topological_order()) {
        if (!is_noop(*op, reg)) continue;
        bypass(g, op, op->outputs().front().second, op->inputs().front().second);
        changed = true;
    }
    if (changed) g.remove_unused_variables();
    return changed;
}

}  // namespace

std::unique_ptr<Pass> remove_noops() { return std::make_unique<FnPass>("remove_noops", run); }

}  // namespace graft::optimize::rules
