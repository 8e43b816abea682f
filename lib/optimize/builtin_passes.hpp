// Internal: the built-in passes (one file each: bool NAME(Graph&, const Registry&), true when it
// changed the graph) and what they share. pipeline.cpp lists them by name.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graft/optimize/passes.hpp"

namespace graft::optimize::passes {

bool remove_noops(Graph& g, const Registry& reg);        // Identity, identity Reshape/Transpose, linear Activation, 1-input Merge
bool constant_fold(Graph& g, const Registry& reg);       // ops whose inputs are all constants, run on the native kernels
bool fold_batchnorm(Graph& g, const Registry& reg);      // BatchNormalization into the preceding Linear/Conv weights and bias
bool fold_bias_add(Graph& g, const Registry& reg);       // Add of a per-channel constant into the preceding Linear/Conv bias
bool fold_pad(Graph& g, const Registry& reg);            // a zero Pad of spatial axes into the convolution reading it
bool fuse_activation(Graph& g, const Registry& reg);     // Activation into its producer's epilogue
bool fuse_elementwise(Graph& g, const Registry& reg);    // chains of elementwise ops into one FusedElementwise
bool fuse_residual(Graph& g, const Registry& reg);       // Add(conv(x), r) into the conv's residual input
bool cancel_transposes(Graph& g, const Registry& reg);   // Transpose of a Transpose; Transpose to the same order
bool sink_transposes(Graph& g, const Registry& reg);     // T -> elementwise -> T^-1 becomes the elementwise op alone
bool cse(Graph& g, const Registry& reg);                 // common subexpression elimination
bool dead_ops(Graph& g, const Registry& reg);            // ops no graph output depends on
bool legalize(Graph& g, const Registry& reg);            // legalize_layout as a pass

/// A pass made of a name and a function.
class FnPass final : public Pass {
public:
    using Fn = bool (*)(Graph&, const Registry&);
    FnPass(std::string name, Fn fn) : name_(std::move(name)), fn_(fn) {}
    std::string name() const override { return name_; }
    bool run(Graph& g, const Registry& reg) override { return fn_(g, reg); }

private:
    std::string name_;
    Fn fn_;
};

/// True if `v` is read by `op` only (once or more) and is not a graph output.
inline bool only_read_by(const Graph& g, const Variable* v, const Operator* op) {
    if (g.is_output(v)) return false;
    auto c = g.consumers(v);
    return c.size() == 1 && c.front() == op;
}

/// How a pass ends: a graph it changed drops the variables nothing reads any more. Returns
/// `changed`.
inline bool finish_pass(Graph& g, bool changed) {
    if (changed) g.remove_unused_variables();
    return changed;
}

/// Removes `op`, whose output `y` equals `x`: every reader of y reads x.
inline void bypass(Graph& g, Operator* op, Variable* y, Variable* x) {
    g.replace_uses(y, x);
    g.remove_op(op);
}

/// A new constant named after `base`.
inline ConstantVariable* new_constant(Graph& g, const std::string& base, Order order, Shape shape, std::vector<float> data) {
    return g.add_constant(g.unique_name(base), std::move(order), std::move(shape),
                          std::make_shared<const std::vector<float>>(std::move(data)));
}

/// Replaces `op` by an operator of the same type, name, layer, attributes and outputs reading
/// `inputs` (to add or drop an input). Returns the new operator.
inline Operator* rebuild(Graph& g, Operator* op, NamedVars inputs, Attributes attrs) {
    const std::string type = op->type(), name = op->name(), layer = op->layer();
    NamedVars outputs = op->outputs();
    g.remove_op(op);
    Operator* n = g.add_op(type, name, std::move(inputs), std::move(outputs), std::move(attrs));
    n->set_layer(layer);
    return n;
}

/// rebuild() with one more input: `port` reading `v`.
inline Operator* add_input(Graph& g, Operator* op, const std::string& port, Variable* v) {
    NamedVars inputs = op->inputs();
    inputs.emplace_back(port, v);
    return rebuild(g, op, std::move(inputs), op->attrs());
}

/// Sets `p`'s bias input b to `nb`, adding the input if p has none (`b` is the current one).
inline void set_bias(Graph& g, Operator* p, const ConstantVariable* b, Variable* nb) {
    if (b)
        g.set_input(p, "b", nb);
    else
        add_input(g, p, "b", nb);
}

/// The producer P of `act`'s input when fuse_activation moves `act` into P's epilogue: `act` is
/// an Activation, P's schema takes one (activation_epilogue), P has none yet and P's output is
/// read by `act` alone. Null otherwise.
Operator* epilogue_producer(const Graph& g, const Registry& reg, const Operator& act);

inline const ConstantVariable* as_constant(const Variable* v) {
    return v && v->is_constant() ? static_cast<const ConstantVariable*>(v) : nullptr;
}

}  // namespace graft::optimize::passes
