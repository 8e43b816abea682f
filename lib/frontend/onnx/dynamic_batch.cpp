#include "frontend/onnx/dynamic_batch.hpp"

namespace graft::onnx {

void DynamicBatch::probe() {
    const auto vars = g_.variables();
    probed_vars_ = vars.size();
    Graph c = g_.clone();
    std::unordered_map<std::string, const Variable*> copies;
    for (const Variable* v : c.variables()) copies.emplace(v->name(), v);
    std::vector<Shape> input_shapes;
    for (const Variable* v : c.inputs()) input_shapes.push_back(v->shape());
    std::vector<std::array<Shape, kProbes.size()>> shapes(vars.size());
    for (std::size_t p = 0; p < kProbes.size(); ++p) {
        for (std::size_t k = 0; k < c.inputs().size(); ++k) {
            Shape s = input_shapes[k];
            for (auto& d : s)
                if (d == kDynamic) d = kProbes[p];
            c.inputs()[k]->set_type(c.inputs()[k]->order(), s);
        }
        try {
            infer_shapes(c, registry_);
        } catch (const Error&) {
            return;  // an op refuses a probe size: nothing more is known than the static sizes
        }
        for (std::size_t k = 0; k < vars.size(); ++k) shapes[k][p] = copies.at(vars[k]->name())->shape();
    }
    for (std::size_t k = 0; k < vars.size(); ++k) probed_.emplace(vars[k], std::move(shapes[k]));
}

std::vector<SymInt> DynamicBatch::dims(const Value& v, const std::string& what) {
    const Shape s = v.var->shape_in(v.logical);
    std::vector<SymInt> out;
    for (auto d : s) out.push_back({d, 0});
    if (numel(s) != kDynamic) return out;
    // Sizes at the probes never change once a variable exists: probe again only for new ones.
    if (!probed_.count(v.var) && probed_vars_ != g_.variables().size()) probe();
    const auto it = probed_.find(v.var);
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != kDynamic) continue;
        const std::size_t axis = v.var->order().index(v.logical[i]);
        bool ok = it != probed_.end();
        if (ok) {
            const auto& at = it->second;
            const std::int64_t b = at[1][axis] - at[0][axis], a = at[0][axis] - b * kProbes[0];
            ok = b != 0 && at[2][axis] == a + b * kProbes[2];
            out[i] = {a, b};
        }
        if (!ok)
            throw UnsupportedError(what + ": dimension " + std::to_string(i) + " of " + v.var->describe() +
                                   " varies with the batch size in a way graft cannot follow while converting");
    }
    return out;
}

std::pair<Variable*, Axis> DynamicBatch::carrier(const std::string& what) const {
    for (Variable* v : g_.inputs())
        for (std::size_t i = 0; i < v->ndim(); ++i)
            if (v->shape()[i] == kDynamic) return {v, v->order()[i]};
    throw UnsupportedError(what + ": a value that depends on the batch size, in a model without a dynamic batch");
}

}  // namespace graft::onnx
