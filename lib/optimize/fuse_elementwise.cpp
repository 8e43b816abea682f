// Rule fuse_elementwise (WebDNN's ElementwiseKernelFusion): a tree or DAG of elementwise ops -
// Merge, BiasAdd, Activation, BatchNormalization and Affine with constant parameters, PReLU, and
// FusedElementwise itself - whose intermediate values are read inside the group only (and are no
// graph outputs) becomes one FusedElementwise op running a small program (ops/fused/fused.hpp).
// Per-axis parameters (bias, scale, alpha) become broadcast inputs. A group needs two ops or more.
// An Activation its producer could take as an epilogue is left to fuse_activation.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "ops/fused/fused.hpp"
#include "ops/op_util.hpp"
#include "optimize/rules.hpp"

namespace graft::optimize::rules {

namespace {

namespace fz = ops::fused;
using Operand = std::pair<Variable*, std::string>;  // a variable and its broadcast spec ("" = y's shape)

std::string join_axes(const std::vector<std::string>& names) {
    if (names.empty()) return "*";
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ",") + n;
    return s;
}

bool constant_or_absent(const Operator& op, const char* name) {
    const Variable* v = op.input_or_null(name);
    return !v || v->is_constant();
}

/// An Activation that fuse_activation would move into its producer's epilogue.
bool epilogue_candidate(const Graph& g, const Registry& reg, const Operator& act) {
    Variable* x = act.input("x");
    const Operator* p = x->producer();
    if (!p || p->outputs().size() != 1 || p->output_or_null("y") != x || !only_read_by(g, x, &act)) return false;
    const OpSchema* s = reg.find_op(p->type());
    return s && s->activation_epilogue && p->attr_or<std::string>("activation", "linear") == "linear";
}

/// The values `op` reads as a fused program would (the first one has y's shape), or nullopt when
/// the op cannot be fused.
std::optional<std::vector<Operand>> operands(const Graph& g, const Registry& reg, const Operator& op) {
    const Variable* y = op.output_or_null("y");
    if (!y || op.outputs().size() != 1 || y->dtype() != DType::float32) return std::nullopt;
    std::vector<Operand> out;
    const auto& t = op.type();
    try {
        if (t == "Merge") {
            static const std::set<std::string> kinds = {"add", "sub", "mul", "avg", "max", "min"};
            if (op.inputs().size() < 2 || !kinds.count(op.attr<std::string>("op"))) return std::nullopt;
            if (op.attr<std::string>("op") == "sub" && op.inputs().size() != 2) return std::nullopt;
            for (const auto& [n, v] : op.inputs()) out.emplace_back(v, "");
        } else if (t == "BiasAdd") {
            out = {{op.input("x"), ""}, {op.input("b"), op.attrs().get_axis("axis", op.describe()).name()}};
        } else if (t == "Activation") {
            if (!ops::is_known_activation(op.attr<std::string>("activation")) || epilogue_candidate(g, reg, op)) return std::nullopt;
            out = {{op.input("x"), ""}};
        } else if (t == "BatchNormalization") {
            for (const char* n : {"mean", "var", "gamma", "beta"})
                if (!constant_or_absent(op, n)) return std::nullopt;
            out = {{op.input("x"), ""}};
        } else if (t == "Affine") {
            if (!constant_or_absent(op, "scale") || !constant_or_absent(op, "shift")) return std::nullopt;
            const auto spec = join_axes(op.attr<std::vector<std::string>>("axes"));
            out = {{op.input("x"), ""}, {op.input("scale"), spec}, {op.input("shift"), spec}};
        } else if (t == "PReLU") {
            out = {{op.input("x"), ""}, {op.input("alpha"), join_axes(op.input("alpha")->order().names())}};
        } else if (t == ops::kFusedElementwise) {
            const auto p = fz::decode(op);
            if (p.bcast.size() != op.inputs().size()) return std::nullopt;
            for (std::size_t i = 0; i < p.bcast.size(); ++i) out.emplace_back(op.inputs()[i].second, p.bcast[i]);
        } else {
            return std::nullopt;
        }
    } catch (const Error&) {
        return std::nullopt;  // malformed: leave it to the backend, which reports it with context
    }
    // every value read at y's shape really has y's order and shape
    for (const auto& [v, spec] : out)
        if (spec.empty() && (v->order() != y->order() || v->shape() != y->shape() || v->dtype() != DType::float32)) return std::nullopt;
    if (out.empty() || !out.front().second.empty()) return std::nullopt;
    return out;
}

/// Steps an op turns into (to keep programs within the kernel's limits).
std::size_t step_count(const Operator& op) {
    const auto& t = op.type();
    if (t == "Merge") return op.inputs().size() - 1 + (op.attr<std::string>("op") == "avg");
    if (t == "BatchNormalization" || t == "Affine") return 2;
    if (t == ops::kFusedElementwise) return op.attr<std::vector<std::string>>("steps").size();
    return 1;
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

    /// Appends the steps of `op`; returns the value of its output.
    Ref add(const Operator& op, const std::vector<Operand>& ins) {
        const auto& t = op.type();
        if (t == "Merge") {
            const auto kind = op.attr<std::string>("op");
            Ref acc = ref(ins[0]);
            for (std::size_t i = 1; i < ins.size(); ++i) acc = step(kind == "avg" ? "add" : kind, acc, ref(ins[i]));
            if (kind == "avg") acc = step("div", acc, std::nullopt, "", {static_cast<double>(ins.size()), 0.0, 0.0});
            return acc;
        }
        if (t == "BiasAdd") return step("add", ref(ins[0]), ref(ins[1]));
        if (t == "Activation") {
            const auto fn = op.attr<std::string>("activation");
            const auto p = ops::act_params(op, fn);
            return step("act", ref(ins[0]), std::nullopt, fn, {p.alpha, p.max_value, p.threshold});
        }
        if (t == "Affine") return step("add", step("mul", ref(ins[0]), ref(ins[1])), ref(ins[2]));
        if (t == "PReLU") return step("prelu", ref(ins[0]), ref(ins[1]));
        if (t == "BatchNormalization") return batch_norm(op, ins[0]);
        // FusedElementwise: its steps, renumbered
        const auto p = fz::decode(op);
        std::vector<Ref> local;
        for (std::size_t i = 0; i < p.bcast.size(); ++i) local.push_back(ref({op.inputs()[i].second, p.bcast[i]}));
        Ref last;
        for (const auto& s : p.steps) {
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
    Ref batch_norm(const Operator& op, const Operand& x) {
        // scale and shift per channel, as the BatchNormalization kernel computes them
        auto data = [&](const char* n) { return as_constant(op.input_or_null(n)); };
        const auto* mean = data("mean");
        const auto* var = data("var");
        const auto* gamma = data("gamma");
        const auto* beta = data("beta");
        const double eps = op.attr<double>("epsilon");
        const std::size_t c = mean->data().size();
        std::vector<float> scale(c), shift(c);
        for (std::size_t i = 0; i < c; ++i) {
            const double s = (gamma ? gamma->data()[i] : 1.0) / std::sqrt(static_cast<double>(var->data()[i]) + eps);
            scale[i] = static_cast<float>(s);
            shift[i] = static_cast<float>((beta ? beta->data()[i] : 0.0) - mean->data()[i] * s);
        }
        const auto axis = op.attrs().get_axis("axis", op.describe()).name();
        const auto cs = static_cast<std::int64_t>(c);
        Variable* sc = new_constant(g_, op.name() + "/scale", OrderC, {cs}, std::move(scale));
        Variable* sh = new_constant(g_, op.name() + "/shift", OrderC, {cs}, std::move(shift));
        return step("add", step("mul", ref(x), ref({sc, axis})), ref({sh, axis}));
    }

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
std::vector<Operator*> grow(const Graph& g, const Registry& reg, Operator* root, std::map<Operator*, std::vector<Operand>>& ops) {
    std::set<Operator*> in{root};
    std::size_t steps = step_count(*root);
    for (bool changed = true; changed;) {
        changed = false;
        for (Operator* op : std::vector<Operator*>(in.begin(), in.end()))
            for (const auto& [v, spec] : ops.at(op)) {
                Operator* p = v->producer();
                if (!spec.empty() || !p || in.count(p) || g.is_output(v)) continue;
                auto pin = operands(g, reg, *p);
                if (!pin || steps + step_count(*p) > static_cast<std::size_t>(graft_rt::kFusedMaxSteps)) continue;
                bool ok = true;
                for (Operator* c : g.consumers(v)) {
                    ok = ok && in.count(c);
                    if (ok)
                        for (const auto& [cv, cs] : ops.at(c)) ok = ok && (cv != v || cs.empty());
                }
                if (!ok) continue;
                ops[p] = std::move(*pin);
                in.insert(p);
                steps += step_count(*p);
                changed = true;
            }
    }
    return {in.begin(), in.end()};
}

bool run(Graph& g, const Registry& reg) {
    const auto order = g.topological_order();
    std::map<const Operator*, std::size_t> index;
    for (std::size_t i = 0; i < order.size(); ++i) index[order[i]] = i;
    std::set<const Operator*> gone;
    bool changed = false;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        Operator* root = *it;
        if (gone.count(root)) continue;
        auto rin = operands(g, reg, *root);
        if (!rin) continue;
        std::map<Operator*, std::vector<Operand>> ops{{root, *rin}};
        auto group = grow(g, reg, root, ops);
        if (group.size() < 2) continue;
        if (std::any_of(group.begin(), group.end(), [&](const Operator* op) { return !index.count(op); })) continue;
        std::sort(group.begin(), group.end(), [&](auto* a, auto* b) { return index.at(a) < index.at(b); });

        // the program, ops in topological order; a BatchNormalization adds its scale and shift
        // constants, so check everything that could refuse the group first
        std::map<const Variable*, Ref> internal;
        Builder b(g, internal);
        for (Operator* op : group) internal[op->output("y")] = b.add(*op, ops.at(op));
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
    if (changed) g.remove_unused_variables();
    return changed;
}

}  // namespace

std::unique_ptr<Pass> fuse_elementwise() { return std::make_unique<FnPass>("fuse_elementwise", run); }

}  // namespace graft::optimize::rules
