// Pass cancel_transposes: a Transpose reading a Transpose reads the first one's input instead
// (orders compose by axis name, so T(T(x, a), b) = T(x, b)); if that makes it a Transpose to
// the order x already has, remove_noops takes it away, and dead_ops the first one if unread.
// Across a relabel (a Reshape that renames axes in place) names do not compose, positions do:
// T(relabel(T(x))) whose positions come back to x's is x relabeled, a Reshape the memory plan
// aliases. ONNX exporters wrap an RNN in such a pair (tf2onnx: [N, T, C] to ONNX's [T, N, C],
// which graft's LSTM relabels and turns back): the bench LSTM at batch 32 spent 1% of its time
// moving its input there and back.
#include "ops/op_types.hpp"
#include "ops/shape/shape.hpp"
#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

namespace {

/// A Reshape that keeps every element in place and only renames axes: it reads x in x's own
/// order and writes y, of the same sizes position by position, in y's.
bool is_relabel(const Operator& op) {
    if (op.type() != ops::kReshape) return false;
    const auto a = ops::ReshapeAttrs::parse(op);
    const Variable* x = op.input("x");
    const Variable* y = op.output("y");
    return a.in_order == x->order() && a.out_order == y->order() && y->shape() == x->shape();
}

/// Whether t's output holds, position by position, the data of `src`, t reading a relabel of a
/// Transpose of src.
bool positions_return(const Variable& src, const Variable& t1_out, const Variable& relabeled, const Variable& y) {
    for (std::size_t j = 0; j < y.ndim(); ++j) {
        const std::size_t at_relabeled = relabeled.order().index(y.order()[j]);  // relabeled keeps t1_out's positions
        if (src.order().index(t1_out.order()[at_relabeled]) != j) return false;
    }
    return true;
}

/// y written by a Reshape relabeling src to y's axis names (sizes following src's position by position).
void relabel_to(Graph& g, Operator* t, Variable* src, Variable* y) {
    const std::string name = t->name(), layer = t->layer();
    g.remove_op(t);
    Attributes a;
    a.set("in_order", src->order());
    a.set("out_order", y->order());
    a.set("shape", src->shape());
    std::vector<std::string> follow;
    for (const Axis& axis : src->order().axes()) follow.push_back(axis.name());
    a.set("follow", std::move(follow));
    g.add_op(ops::kReshape, name, {{"x", src}}, {{"y", y}}, std::move(a))->set_layer(layer);
}

}  // namespace

bool cancel_transposes(Graph& g, const Registry&) {
    bool changed = false;
    for (Operator* t : g.topological_order()) {
        if (t->type() != ops::kTranspose) continue;
        Variable* y = t->output("y");
        Variable* x = t->input("x");
        if (x->order() == y->order() && x->shape() == y->shape()) {
            bypass(g, t, y, x);
            changed = true;
            continue;
        }
        Operator* first = x->producer();
        if (first && is_relabel(*first)) {
            Variable* v1 = first->input("x");
            Operator* t1 = v1->producer();
            if (t1 && t1->type() == ops::kTranspose && positions_return(*t1->input("x"), *v1, *x, *y)) {
                relabel_to(g, t, t1->input("x"), y);
                changed = true;
            }
            continue;
        }
        if (!first || first->type() != ops::kTranspose) continue;
        Variable* src = first->input("x");
        if (src->order() == y->order()) {
            bypass(g, t, y, src);
        } else {
            g.set_input(t, "x", src);
        }
        changed = true;
    }
    return finish_pass(g, changed);
}

}  // namespace graft::optimize::passes
