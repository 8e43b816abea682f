// Pass dead_ops: operators no graph output depends on are removed, then unused variables.
#include <set>

#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

bool dead_ops(Graph& g, const Registry&) {
    std::set<const Operator*> live;
    std::vector<const Variable*> work(g.outputs().begin(), g.outputs().end());
    while (!work.empty()) {
        const Variable* v = work.back();
        work.pop_back();
        const Operator* p = v->producer();
        if (!p || !live.insert(p).second) continue;
        for (const auto& [n, in] : p->inputs()) work.push_back(in);
    }
    bool changed = false;
    for (Operator* op : g.operators())
        if (!live.count(op)) {
            g.remove_op(op);
            changed = true;
        }
    return g.remove_unused_variables() > 0 || changed;
}


}  // namespace graft::optimize::passes
