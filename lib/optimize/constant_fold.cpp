// Pass constant_fold: an operator whose inputs are all constants is run once, now, by the
// registry's ConstantEvaluator (libgraft's runs the native kernels, the same code the model would
// run), and its outputs become constants. Transposes of weights inserted by the layout pass fold
// this way too.
#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

namespace {

bool foldable(const Graph& g, const Operator& op) {
    if (op.inputs().empty()) return false;
    for (const auto& [n, v] : op.inputs())
        if (!v->is_constant()) return false;
    // A graph output stays a computed variable (a model whose output is a constant, such as ONNX's
    // Shape of a static input, copies it there when it runs).
    for (const auto& [n, v] : op.outputs())
        if (v->dtype() != DType::float32 || v->numel() < 0 || g.is_output(v)) return false;
    return true;
}

}  // namespace

bool constant_fold(Graph& g, const Registry& reg) {
    const ConstantEvaluator* eval = reg.evaluator();
    if (!eval) return false;
    bool changed = false;
    for (Operator* op : g.topological_order()) {
        if (!foldable(g, *op)) continue;
        std::vector<std::vector<float>> values;
        try {
            values = eval->evaluate(*op, reg);
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
    return finish_pass(g, changed);
}


}  // namespace graft::optimize::passes
