// Pass fold_batchnorm: y = BN(P(x)) where P's schema folds_channel_scale (Linear, Conv1D,
// Conv2D: weights w with the output channel as their last axis, optional bias b in order C)
// becomes P'(x) with
//   s = gamma / sqrt(var + eps),  w' = w * s (per output channel),  b' = (b - mean) * s + beta.
// It fires only when the BN normalizes P's output-channel axis, P has no activation epilogue,
// all BN parameters and P's weights are constants, and P's output is read by the BN alone (a
// second reader needs the value before normalization).
#include <cmath>

#include "ops/op_types.hpp"
#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

namespace {

/// y = x . w (+ b) with w's last axis the output channel (OpSchema::folds_channel_scale).
bool is_weighted(const Registry& reg, const std::string& t) {
    const OpSchema* s = reg.find_op(t);
    return s && s->folds_channel_scale;
}

}  // namespace

bool fold_batchnorm(Graph& g, const Registry& reg) {
    bool changed = false;
    for (Operator* bn : g.topological_order()) {
        if (bn->type() != ops::kBatchNormalization) continue;
        Variable* x = bn->input("x");
        Operator* p = x->producer();
        if (!p || !is_weighted(reg, p->type()) || !only_read_by(g, x, bn) || p->outputs().size() != 1) continue;
        if (p->attr_or<std::string>("activation", "linear") != "linear" || p->has_input("r")) continue;
        if (x->order().back() != bn->attrs().get_axis("axis", bn->describe())) continue;
        const auto* w = as_constant(p->input("w"));
        const auto* b = as_constant(p->input_or_null("b"));
        if (!w || (p->has_input("b") && !b) || w->order().ndim() < 1) continue;
        const auto* mean = as_constant(bn->input("mean"));
        const auto* var = as_constant(bn->input("var"));
        const auto* gamma = as_constant(bn->input_or_null("gamma"));
        const auto* beta = as_constant(bn->input_or_null("beta"));
        if (!mean || !var || (bn->has_input("gamma") && !gamma) || (bn->has_input("beta") && !beta)) continue;
        const auto units = static_cast<std::size_t>(w->shape().back());
        if (mean->data().size() != units || var->data().size() != units || (b && b->data().size() != units)) continue;

        const double eps = bn->attr<double>("epsilon");
        std::vector<double> s(units);
        std::vector<float> bias(units);
        for (std::size_t c = 0; c < units; ++c) {
            s[c] = (gamma ? gamma->data()[c] : 1.0) / std::sqrt(static_cast<double>(var->data()[c]) + eps);
            const double b0 = b ? b->data()[c] : 0.0;
            bias[c] = static_cast<float>((b0 - mean->data()[c]) * s[c] + (beta ? beta->data()[c] : 0.0));
        }
        std::vector<float> wd(w->data());
        for (std::size_t i = 0; i < wd.size(); ++i) wd[i] = static_cast<float>(wd[i] * s[i % units]);
        // New constants: the old ones may be shared with other operators (a shared layer).
        g.set_input(p, "w", new_constant(g, w->name() + "/bn", w->order(), w->shape(), std::move(wd)));
        auto* nb = new_constant(g, (b ? b->name() : p->name() + "/bias") + "/bn", OrderC, {static_cast<std::int64_t>(units)}, std::move(bias));
        set_bias(g, p, b, nb);
        bypass(g, bn, bn->output("y"), x);
        changed = true;
    }
    return finish_pass(g, changed);
}


}  // namespace graft::optimize::passes
