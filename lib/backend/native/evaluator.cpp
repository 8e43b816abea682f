#include "backend/native/evaluator.hpp"

#include <cstring>
#include <unordered_map>

#include "backend/native/program.hpp"

namespace graft::native {

namespace {

class ProgramEvaluator final : public ConstantEvaluator {
public:
    std::vector<std::vector<float>> evaluate(const Operator& op, const Registry& reg) const override {
        if (!reg.find_generator<Backend>(op.type()))
            throw UnsupportedError(op.describe() + ": the native backend has no kernel for it");
        Graph mini;
        NamedVars ins, outs;
        std::unordered_map<const Variable*, Variable*> map;
        for (const auto& [n, v] : op.inputs()) {
            auto it = map.find(v);
            if (it == map.end()) {
                const auto* c = static_cast<const ConstantVariable*>(v);
                it = map.emplace(v, mini.add_constant(c->name(), c->order(), c->shape(), c->shared_data())).first;
            }
            ins.emplace_back(n, it->second);
        }
        for (const auto& [n, v] : op.outputs()) outs.emplace_back(n, mini.add_variable(v->name(), v->dtype(), v->order(), v->shape()));
        mini.add_op(op.type(), op.name(), ins, outs, op.attrs());
        for (const auto& [n, v] : outs) mini.add_output(v);
        auto program = Program::compile(std::move(mini), reg);
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
};

}  // namespace

std::shared_ptr<const ConstantEvaluator> constant_evaluator() { return std::make_shared<ProgramEvaluator>(); }

}  // namespace graft::native
