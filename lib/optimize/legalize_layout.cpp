// Layout legalization: a Transpose in front of every input whose order an op cannot take.
#include <map>
#include <utility>

#include "graft/optimize/passes.hpp"
#include "ops/op_types.hpp"

namespace graft::optimize {

std::size_t legalize_layout(Graph& g, const Registry& reg) {
    std::size_t inserted = 0;
    std::map<std::pair<const Variable*, std::vector<std::string>>, Variable*> cache;
    for (Operator* op : g.topological_order()) {
        const OpSchema& s = reg.op(op->type());
        if (!s.required_order) continue;
        for (const auto& [name, v] : NamedVars(op->inputs())) {
            auto want = s.required_order(*op, name);
            if (!want || *want == v->order()) continue;
            if (!v->order().same_axes(*want))
                throw ShapeError(op->describe() + ": input '" + name + "' " + v->describe() + " cannot be laid out as " + want->str());
            auto key = std::make_pair(static_cast<const Variable*>(v), want->names());
            auto it = cache.find(key);
            if (it == cache.end()) {
                Attributes a;
                a.set("order", *want);
                Operator* t = add_op(g, reg, ops::kTranspose, g.unique_name(v->name() + "/to_" + want->str()), {{"x", v}}, std::move(a));
                t->set_layer(op->layer());
                it = cache.emplace(key, t->output("y")).first;
                ++inserted;
            }
            g.set_input(op, name, it->second);
        }
    }
    return inserted;
}

}  // namespace graft::optimize
