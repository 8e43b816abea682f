// Pass fuse_elementwise (WebDNN's ElementwiseKernelFusion): a tree or DAG of elementwise ops -
// those whose schema writes them as a fused program (OpSchema::elementwise_program: Merge,
// BiasAdd, Activation, BatchNormalization and Affine with constant parameters, PReLU, and
// FusedElementwise itself) - whose intermediate values are read inside the group only (and are no
// graph outputs) becomes one FusedElementwise op running their programs joined
// (ops/fused/fused.hpp). Per-axis parameters (bias, scale, alpha) are broadcast inputs. A group
// needs two ops or more. An Activation its producer could take as an epilogue is left to
// fuse_activation.
#include <algorithm>
#include <map>
#include <set>

#include "ops/fused/fused.hpp"
#include "ops/op_types.hpp"
#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

namespace {

namespace fz = ops::fused;
/// A value a program reads and its broadcast spec ("" = y's shape); the value is null for a
/// constant the program makes (ElementwiseProgram::Input::data).
using Operand = std::pair<Variable*, std::string>;

/// An op as a fused program of its own.
struct Form {
    std::vector<ElementwiseProgram::Input> inputs;
    fz::Program program;
    std::vector<Operand> operands() const {
        std::vector<Operand> out;
        for (std::size_t i = 0; i < inputs.size(); ++i) out.emplace_back(inputs[i].var, program.bcast[i]);
        return out;
    }
};

/// The op as its schema writes it as a fused program, or nullopt when it cannot be fused.
std::optional<Form> form(const Graph& g, const Registry& reg, const Operator& op) {
    const Variable* y = op.output_or_null("y");
    if (!y || op.outputs().size() != 1 || y->dtype() != DType::float32) return std::nullopt;
    const OpSchema* schema = reg.find_op(op.type());
    if (!schema || !schema->elementwise_program || epilogue_producer(g, reg, op)) return std::nullopt;
    Form f;
    try {
        auto e = schema->elementwise_program(op);
        if (!e) return std::nullopt;
        f.program = fz::decode(e->attrs, op.describe());
        f.inputs = std::move(e->inputs);
    } catch (const Error&) {
        return std::nullopt;  // malformed: leave it to the backend, which reports it with context
    }
    if (f.inputs.size() != f.program.bcast.size() || !f.program.bcast.front().empty()) return std::nullopt;
    for (const auto& [v, spec] : f.operands()) {
        // a made constant is broadcast; every value read at y's shape really has y's order and shape
        if (!v) {
            if (spec.empty()) return std::nullopt;
        } else if (spec.empty() && (v->order() != y->order() || v->shape() != y->shape() || v->dtype() != DType::float32)) {
            return std::nullopt;
        }
    }
    for (const auto& in : f.inputs)
        if (!in.var && !in.data) return std::nullopt;
    return f;
}

/// A value of the program under construction: an input (by operand) or a step.
struct Ref {
    bool step = false;
    std::size_t index = 0;
};

class Builder {
public:
    Builder(Graph& g, std::map<const Variable*, Ref>& internal) : g_(g), internal_(internal) {}

    Ref ref(const Operand& o) {
        if (o.second.empty())
            if (auto it = internal_.find(o.first); it != internal_.end()) return it->second;
        for (std::size_t i = 0; i < inputs_.size(); ++i)
            if (inputs_[i] == o) return {false, i};
        inputs_.push_back(o);
        return {false, inputs_.size() - 1};
    }
    Ref step(const std::string& code, Ref a, std::optional<Ref> b = std::nullopt, const std::string& fn = "",
             std::array<double, 3> params = {0.0, 0.0, 0.0}) {
        steps_.push_back({code, a, b, fn, params});
        return {true, steps_.size() - 1};
    }

    /// Appends the steps of `f`, making its constants; returns the value of its output.
    Ref add(const Form& f) {
        std::vector<Ref> local;
        for (std::size_t i = 0; i < f.inputs.size(); ++i) {
            const auto& in = f.inputs[i];
            Variable* v = in.var;
            if (!v) v = g_.add_constant(g_.unique_name(in.name), OrderC, {static_cast<std::int64_t>(in.data->size())}, in.data);
            local.push_back(ref({v, f.program.bcast[i]}));
        }
        Ref last;
        for (const auto& s : f.program.steps) {
            const Ref a = local.at(static_cast<std::size_t>(s.a));
            std::optional<Ref> b;
            if (s.b >= 0) b = local.at(static_cast<std::size_t>(s.b));
            last = step(s.code, a, b, s.fn, s.params);
            local.push_back(last);
        }
        return last;
    }

    /// The program with inputs reordered so that input 0 is `first` (an operand with y's shape).
    fz::Program program(std::size_t first) const {
        std::vector<std::size_t> pos(inputs_.size());
        std::size_t next = 1;
        for (std::size_t i = 0; i < inputs_.size(); ++i) pos[i] = i == first ? 0 : next++;
        fz::Program p;
        p.bcast.resize(inputs_.size());
        for (std::size_t i = 0; i < inputs_.size(); ++i) p.bcast[pos[i]] = inputs_[i].second;
        auto num = [&](const Ref& r) {
            return static_cast<std::int64_t>(r.step ? inputs_.size() + r.index : pos[r.index]);
        };
        for (const auto& s : steps_) p.steps.push_back({s.code, num(s.a), s.b ? num(*s.b) : -1, s.fn, s.params});
        return p;
    }
    NamedVars input_vars(std::size_t first) const {
        NamedVars v;
        v.emplace_back("x0", inputs_[first].first);
        for (std::size_t i = 0; i < inputs_.size(); ++i)
            if (i != first) v.emplace_back("x" + std::to_string(v.size()), inputs_[i].first);
        return v;
    }
    const std::vector<Operand>& inputs() const noexcept { return inputs_; }
    std::size_t steps() const noexcept { return steps_.size(); }

private:
    struct PendingStep {
        std::string code;
        Ref a;
        std::optional<Ref> b;
        std::string fn;
        std::array<double, 3> params;
    };
    Graph& g_;
    std::map<const Variable*, Ref>& internal_;
    std::vector<Operand> inputs_;
    std::vector<PendingStep> steps_;
};

/// Grows the group ending at `root` backwards: a producer joins when every reader of its output is
/// in the group, reads it at y's shape, and the output is no graph output.
std::vector<Operator*> grow(const Graph& g, const Registry& reg, Operator* root, std::map<Operator*, Form>& forms) {
    std::set<Operator*> in{root};
    std::size_t steps = forms.at(root).program.steps.size();
    for (bool changed = true; changed;) {
        changed = false;
        for (Operator* op : std::vector<Operator*>(in.begin(), in.end()))
            for (const auto& [v, spec] : forms.at(op).operands()) {
                if (!spec.empty()) continue;
                Operator* p = v->producer();
                if (!p || in.count(p) || g.is_output(v)) continue;
                auto pf = form(g, reg, *p);
                if (!pf || steps + pf->program.steps.size() > static_cast<std::size_t>(graft_rt::kFusedMaxSteps)) continue;
                bool ok = true;
                for (Operator* c : g.consumers(v)) {
                    ok = ok && in.count(c);
                    if (ok)
                        for (const auto& [cv, cs] : forms.at(c).operands()) ok = ok && (cv != v || cs.empty());
                }
                if (!ok) continue;
                steps += pf->program.steps.size();
                forms.emplace(p, std::move(*pf));
                in.insert(p);
                changed = true;
            }
    }
    return {in.begin(), in.end()};
}

}  // namespace

bool fuse_elementwise(Graph& g, const Registry& reg) {
    const auto order = g.topological_order();
    std::map<const Operator*, std::size_t> index;
    for (std::size_t i = 0; i < order.size(); ++i) index[order[i]] = i;
    std::set<const Operator*> gone;
    bool changed = false;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        Operator* root = *it;
        if (gone.count(root)) continue;
        auto rf = form(g, reg, *root);
        if (!rf) continue;
        std::map<Operator*, Form> forms;
        forms.emplace(root, std::move(*rf));
        auto group = grow(g, reg, root, forms);
        if (group.size() < 2) continue;
        if (std::any_of(group.begin(), group.end(), [&](const Operator* op) { return !index.count(op); })) continue;
        std::sort(group.begin(), group.end(), [&](auto* a, auto* b) { return index.at(a) < index.at(b); });

        // the program, ops in topological order; a form may add constants (BatchNormalization's
        // scale and shift), which a refused group drops again
        std::map<const Variable*, Ref> internal;
        Builder b(g, internal);
        for (Operator* op : group) internal[op->output("y")] = b.add(forms.at(op));
        const auto refuse = [&] { g.remove_unused_variables(); };  // drops constants made for nothing
        if (b.inputs().size() > static_cast<std::size_t>(graft_rt::kFusedMaxInputs)) {
            refuse();
            continue;
        }
        // input 0 (the one the output may overwrite): a value at y's shape read by the group only
        std::set<const Operator*> members(group.begin(), group.end());
        std::size_t first = b.inputs().size();
        for (std::size_t i = 0; i < b.inputs().size(); ++i) {
            const auto& [v, spec] = b.inputs()[i];
            if (!spec.empty()) continue;
            if (first == b.inputs().size()) first = i;
            bool only_group = !g.is_output(v) && !v->is_constant();
            for (const Operator* c : g.consumers(v)) only_group = only_group && members.count(c);
            if (only_group) {
                first = i;
                break;
            }
        }
        if (first == b.inputs().size()) {
            refuse();
            continue;
        }
        const auto program = b.program(first);
        NamedVars inputs = b.input_vars(first);
        Variable* y = root->output("y");
        const std::string name = root->name(), layer = root->layer();
        try {
            const Operator probe(ops::kFusedElementwise, name, inputs, fz::encode(program));
            auto types = reg.op(ops::kFusedElementwise).infer(probe);
            if (types.size() != 1 || types[0].second.order != y->order() || types[0].second.shape != y->shape()) throw ShapeError("type");
        } catch (const Error&) {
            refuse();
            continue;
        }
        for (Operator* op : group) {
            gone.insert(op);
            g.remove_op(op);
        }
        g.add_op(ops::kFusedElementwise, name, std::move(inputs), {{"y", y}}, fz::encode(program))->set_layer(layer);
        changed = true;
    }
    return finish_pass(g, changed);
}


}  // namespace graft::optimize::passes
