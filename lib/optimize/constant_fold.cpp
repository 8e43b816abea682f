// Rule constant_fold: an operator whose inputs are all constants is run once, now, on the native
// kernels (the same code the model would run), and its outputs become constants. Transposes of
// weights inserted by the layout pass fold this way too.
#include <cstring>

#include "backend/native/program.hpp"
#include "optimize/rules.hpp"

namespace graft::optimize::rules {

namespace {

bool foldable(const Operator& op, const Registry& reg) {
    if (op.inputs().empty() || !reg.has_generator("native", op.type())) return false;
    for (const auto& [n, v] : op.inputs())
        if (!v->is_constant()) return false;
    for (const auto& [n, v] : op.outputs())
        if (v->dtype() != DType::float32 || v->numel() < 0) return false;
    return true;
}

/// The op's outputs computed by a one-op native program.
std::vector<std::vector<float>> evaluate(const Operator& op, const Registry& reg) {
    Graph mini;
    NamedVars ins, outs;
    std::unordered_map<const Variable*, Variable*> map;
    for (const auto& [n, v] : op.inputs()) {
        auto it = map.find(v);
        if (it == map.end()) {
            const auto* c = as_constant(v);
            it = map.emplace(v, mini.add_constant(c->name(), c->order(), c->shape(), c->shared_data())).first;
        }
        ins.emplace_back(n, it->second);
    }
    for (const auto& [n, v] : op.outputs()) outs.emplace_back(n, mini.add_variable(v->name(), v->dtype(), v->order(), v->shape()));
    mini.add_op(op.type(), op.name(), ins, outs, op.attrs());
    for (const auto& [n, v] : outs) mini.add_output(v);
    auto program = native::Program::compile(std::move(mini), reg);
    std::vector<std::byte> arena(program->arena_bytes() + 64);
    auto addr = reinterpret_cast<std::uintptr_t>(arena.data());
    std::byte* base = arena.data() + ((64 - addr % 64) % 64);
    program->run(base);
    std::vector<std::vector<float>> values;
    for (std::size_t i = 0; i < outs.size(); ++i) {
        std::vector<float> d(static_cast<std::size_t>(outs[i].second->numel()));
        if (!d.empty()) std::memcpy(d.data(), program->outputs()[i].get(base), d.size() * sizeof(float));
        values.push_back(std::move(d));
    }
    return values;
}

bool run(Graph& g, const Registry& reg) {
    bool changed = false;
    for (Operator* op : g.topological_order()) {
        if (!foldable(*op, reg)) continue;
        std::vector<std::vector<float>> values;
        try {
            values = evaluate(*op, reg);
        } catch (const Error&) {
            continue;  // left for the backend, which reports the problem with the whole model's context
        }
        for (std::size_t i = 0; i < values.size(); ++i) {
            Variable* y = op->outputs()[i].second;
            auto* c = new_constant(g, y->name(), y->order(), y->shape(), std::move(values[i]));
            g.replace_uses(y, c);
        }
        g.remove_op(op);
        changed = true;
    }
    if (changed) g.remove_unused_variables();
    return changed;
}

}  // namespace

std::unique_ptr<Pass> constant_fold() { return std::make_unique<FnPass>("constant_fold", run); }

}  // namespace graft::optimize::rules
