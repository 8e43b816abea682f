// graft/ir/graph.hpp - the IR graph: it owns its variables and operators.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graft/error.hpp"
#include "graft/ir/operator.hpp"
#include "graft/ir/variable.hpp"

namespace graft {

class Graph {
public:
    Graph() = default;
    Graph(Graph&&) = default;
    Graph& operator=(Graph&&) = default;

    // ---- building ------------------------------------------------------------------------

    Variable* add_variable(const std::string& name, DType dtype, Order order, Shape shape) {
        auto v = std::make_unique<Variable>(name, dtype, std::move(order), std::move(shape));  // may throw: claim after
        claim(name);
        vars_.push_back(std::move(v));
        owned_.insert(vars_.back().get());
        return vars_.back().get();
    }

    ConstantVariable* add_constant(const std::string& name, Order order, Shape shape,
                                   std::shared_ptr<const std::vector<float>> data) {
        auto c = std::make_unique<ConstantVariable>(name, std::move(order), std::move(shape), std::move(data));
        claim(name);
        auto* raw = c.get();
        owned_.insert(raw);
        vars_.push_back(std::move(c));
        return raw;
    }

    /// Adds an operator reading `inputs` and writing `outputs` (variables of this graph that no
    /// other operator writes yet).
    Operator* add_op(const std::string& type, const std::string& name, NamedVars inputs, NamedVars outputs,
                     Attributes attrs = {}) {
        if (op_names_.count(name)) throw GraphError("duplicate operator name '" + name + "'");
        for (auto& [n, v] : inputs)
            if (!owns(v)) throw GraphError("operator '" + name + "': input '" + n + "' is not a variable of this graph");
        for (auto& [n, v] : outputs) {
            if (!owns(v)) throw GraphError("operator '" + name + "': output '" + n + "' is not a variable of this graph");
            if (v->producer_) throw GraphError("operator '" + name + "': output " + v->describe() + " is already written by '" + v->producer_->name() + "'");
            if (v->is_constant()) throw GraphError("operator '" + name + "': output " + v->describe() + " is a constant");
        }
        auto op = std::make_unique<Operator>(type, name, std::move(inputs), std::move(attrs));
        op->outputs_ = std::move(outputs);
        for (auto& [n, v] : op->outputs_) v->producer_ = op.get();
        op_names_.insert(name);
        ops_.push_back(std::move(op));
        return ops_.back().get();
    }

    void add_input(Variable* v) {
        if (!owns(v)) throw GraphError("graph input " + v->describe() + " is not a variable of this graph");
        inputs_.push_back(v);
    }
    void add_output(Variable* v) {
        if (!owns(v)) throw GraphError("graph output " + v->describe() + " is not a variable of this graph");
        outputs_.push_back(v);
    }
    void set_output(std::size_t i, Variable* v) { outputs_.at(i) = v; }

    /// A name not used yet by any variable or operator, derived from `base`.
    std::string unique_name(const std::string& base) const {
        if (!var_names_.count(base) && !op_names_.count(base)) return base;
        for (std::size_t i = 1;; ++i) {
            auto n = base + "_" + std::to_string(i);
            if (!var_names_.count(n) && !op_names_.count(n)) return n;
        }
    }

    // ---- rewriting (used by passes) ------------------------------------------------------

    /// Every reader of `from` (operators and graph outputs) reads `to` instead.
    void replace_uses(Variable* from, Variable* to) {
        for (auto& op : ops_)
            for (auto& p : op->inputs_)
                if (p.second == from) p.second = to;
        for (auto& o : outputs_)
            if (o == from) o = to;
    }

    void set_input(Operator* op, const std::string& name, Variable* v) {
        for (auto& p : op->inputs_)
            if (p.first == name) { p.second = v; return; }
        throw GraphError(op->describe() + " has no input '" + name + "'");
    }

    /// Removes an operator; its outputs stay as variables without a producer until removed.
    void remove_op(Operator* op) {
        for (auto& [n, v] : op->outputs_) v->producer_ = nullptr;
        op_names_.erase(op->name());
        ops_.erase(std::remove_if(ops_.begin(), ops_.end(), [&](auto& p) { return p.get() == op; }), ops_.end());
    }

    /// Drops variables nothing refers to (not read, not written, not a graph input or output).
    std::size_t remove_unused_variables() {
        std::set<const Variable*> used(inputs_.begin(), inputs_.end());
        used.insert(outputs_.begin(), outputs_.end());
        for (auto& op : ops_) {
            for (auto& p : op->inputs_) used.insert(p.second);
            for (auto& p : op->outputs_) used.insert(p.second);
        }
        std::size_t before = vars_.size();
        vars_.erase(std::remove_if(vars_.begin(), vars_.end(),
                                   [&](auto& v) {
                                       if (used.count(v.get())) return false;
                                       var_names_.erase(v->name());
                                       owned_.erase(v.get());
                                       return true;
                                   }),
                    vars_.end());
        return before - vars_.size();
    }

    // ---- reading -------------------------------------------------------------------------

    const std::vector<Variable*>& inputs() const noexcept { return inputs_; }
    const std::vector<Variable*>& outputs() const noexcept { return outputs_; }
    std::vector<Variable*> variables() const {
        std::vector<Variable*> v;
        for (auto& p : vars_) v.push_back(p.get());
        return v;
    }
    std::vector<Operator*> operators() const {
        std::vector<Operator*> v;
        for (auto& p : ops_) v.push_back(p.get());
        return v;
    }
    Variable* find_variable(const std::string& name) const {
        for (auto& v : vars_)
            if (v->name() == name) return v.get();
        return nullptr;
    }

    /// Operators that read `v`.
    std::vector<Operator*> consumers(const Variable* v) const {
        std::vector<Operator*> out;
        for (auto& op : ops_)
            for (auto& p : op->inputs_)
                if (p.second == v) { out.push_back(op.get()); break; }
        return out;
    }

    bool is_output(const Variable* v) const { return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end(); }
    bool is_input(const Variable* v) const { return std::find(inputs_.begin(), inputs_.end(), v) != inputs_.end(); }

    /// Operators in an order where every producer comes before its readers (stable: among
    /// ready operators, insertion order wins). GraphError on a cycle.
    std::vector<Operator*> topological_order() const {
        std::unordered_map<const Operator*, std::size_t> pending;
        std::unordered_map<const Variable*, std::vector<Operator*>> readers;
        for (auto& op : ops_) {
            std::size_t n = 0;
            std::set<const Variable*> seen;
            for (auto& p : op->inputs_)
                if (p.second->producer_ && seen.insert(p.second).second) {
                    ++n;
                    readers[p.second].push_back(op.get());
                }
            pending[op.get()] = n;
        }
        std::vector<Operator*> order, ready;
        for (auto& op : ops_)
            if (pending[op.get()] == 0) ready.push_back(op.get());
        std::map<const Operator*, std::size_t> index;
        for (std::size_t i = 0; i < ops_.size(); ++i) index[ops_[i].get()] = i;
        while (!ready.empty()) {
            auto it = std::min_element(ready.begin(), ready.end(), [&](auto* a, auto* b) { return index[a] < index[b]; });
            Operator* op = *it;
            ready.erase(it);
            order.push_back(op);
            for (auto& p : op->outputs_)
                for (auto* r : readers[p.second])
                    if (--pending[r] == 0) ready.push_back(r);
        }
        if (order.size() != ops_.size()) {
            for (auto& op : ops_)
                if (pending[op.get()] != 0) throw GraphError("the graph has a cycle through " + op->describe());
        }
        return order;
    }

    /// Checks the graph's structural invariants and throws GraphError naming the first one broken:
    /// every operator input is written by an operator, is a graph input or a constant; graph inputs
    /// have no producer; every output is reachable; no cycle.
    void validate() const {
        for (auto* v : inputs_)
            if (v->producer_) throw GraphError("graph input " + v->describe() + " is written by " + v->producer_->describe());
        for (auto& op : ops_) {
            for (auto& [n, v] : op->inputs_) {
                if (!v) throw GraphError(op->describe() + ": input '" + n + "' is null");
                if (!owns(v)) throw GraphError(op->describe() + ": input '" + n + "' is not a variable of this graph");
                if (!v->producer_ && !v->is_constant() && !is_input(v))
                    throw GraphError(op->describe() + ": input '" + n + "' " + v->describe() + " is never computed");
            }
            for (auto& [n, v] : op->outputs_)
                if (v->producer_ != op.get()) throw GraphError(op->describe() + ": output '" + n + "' has another producer");
        }
        for (auto* v : outputs_)
            if (!v->producer_ && !is_input(v) && !v->is_constant())
                throw GraphError("graph output " + v->describe() + " is never computed");
        if (outputs_.empty()) throw GraphError("the graph has no outputs");
        topological_order();
    }

    /// A deep copy; constant data is shared, not copied.
    Graph clone() const {
        Graph g;
        std::unordered_map<const Variable*, Variable*> map;
        for (auto& v : vars_) {
            if (v->is_constant()) {
                auto* c = static_cast<const ConstantVariable*>(v.get());
                map[v.get()] = g.add_constant(c->name(), c->order(), c->shape(), c->shared_data());
            } else {
                map[v.get()] = g.add_variable(v->name(), v->dtype(), v->order(), v->shape());
            }
        }
        for (auto& op : ops_) {
            NamedVars in, out;
            for (auto& [n, v] : op->inputs_) in.emplace_back(n, map.at(v));
            for (auto& [n, v] : op->outputs_) out.emplace_back(n, map.at(v));
            g.add_op(op->type(), op->name(), std::move(in), std::move(out), op->attrs())->set_layer(op->layer());
        }
        for (auto* v : inputs_) g.inputs_.push_back(map.at(v));
        for (auto* v : outputs_) g.outputs_.push_back(map.at(v));
        g.output_names_ = output_names_;
        g.input_names_ = input_names_;
        return g;
    }

    /// The names the host application uses for inputs and outputs (Keras layer names). They
    /// default to the variables' names.
    std::string input_name(std::size_t i) const { return i < input_names_.size() && !input_names_[i].empty() ? input_names_[i] : inputs_.at(i)->name(); }
    std::string output_name(std::size_t i) const { return i < output_names_.size() && !output_names_[i].empty() ? output_names_[i] : outputs_.at(i)->name(); }
    void set_input_names(std::vector<std::string> n) { input_names_ = std::move(n); }
    void set_output_names(std::vector<std::string> n) { output_names_ = std::move(n); }

private:
    void claim(const std::string& name) {
        if (name.empty()) throw GraphError("a variable needs a name");
        if (!var_names_.insert(name).second) throw GraphError("duplicate variable name '" + name + "'");
    }
    bool owns(const Variable* v) const {
        return v && owned_.count(v) != 0;
    }

    std::vector<std::unique_ptr<Variable>> vars_;
    std::vector<std::unique_ptr<Operator>> ops_;
    std::vector<Variable*> inputs_, outputs_;
    std::vector<std::string> input_names_, output_names_;
    std::set<std::string> var_names_, op_names_;
    std::unordered_set<const Variable*> owned_;
};

/// Whether an input of `g` has a free size (kDynamic) other than the batch (axis N): a sequence's
/// length, an image's height or width. Such a graph is compiled per input shape.
inline bool has_free_sizes(const Graph& g) {
    for (const Variable* v : g.inputs())
        for (std::size_t d = 0; d < v->ndim(); ++d)
            if (v->shape()[d] == kDynamic && v->order()[d] != Axis::N) return true;
    return false;
}

}  // namespace graft
