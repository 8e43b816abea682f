#include "ops/op_util.hpp"

#include <map>

namespace graft::ops {

namespace {
using cpu::Act;
const std::map<std::string, Act>& activations() {
    static const std::map<std::string, Act> m = {
        {"linear", Act::linear},         {"relu", Act::relu},
        {"sigmoid", Act::sigmoid},       {"tanh", Act::tanh},
        {"softplus", Act::softplus},     {"softsign", Act::softsign},
        {"elu", Act::elu},               {"selu", Act::selu},
        {"hard_sigmoid", Act::hard_sigmoid}, {"hard_sigmoid_keras3", Act::hard_sigmoid_k3},
        {"swish", Act::swish},           {"silu", Act::swish},
        {"gelu", Act::gelu},             {"gelu_tanh", Act::gelu_tanh},
        {"exponential", Act::exponential}, {"leaky_relu", Act::leaky_relu},
        {"thresholded_relu", Act::thresholded_relu}, {"relu_general", Act::relu_general},
    };
    return m;
}
}  // namespace

bool is_known_activation(const std::string& fn) { return activations().count(fn) != 0; }

cpu::ActParams act_params(const Operator& op, const std::string& fn) {
    auto it = activations().find(fn);
    if (it == activations().end()) throw UnsupportedError(op.describe() + ": unknown activation '" + fn + "'");
    cpu::ActParams p;
    p.kind = it->second;
    p.alpha = static_cast<float>(op.attr_or<double>("alpha", fn == "elu" ? 1.0 : 0.0));
    p.max_value = static_cast<float>(op.attr_or<double>("max_value", -1.0));
    p.threshold = static_cast<float>(op.attr_or<double>("threshold", 0.0));
    return p;
}

Span conv_span(const Operator& op, std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t dilation,
               const std::string& padding) {
    if (k < 1 || stride < 1 || dilation < 1)
        shape_fail(op, "kernel " + std::to_string(k) + ", stride " + std::to_string(stride) + " and dilation " +
                           std::to_string(dilation) + " must all be at least 1");
    const std::int64_t span = (k - 1) * dilation + 1;
    if (padding == "valid") {
        if (in < span)
            shape_fail(op, "input size " + std::to_string(in) + " is smaller than the kernel's reach " + std::to_string(span) +
                               " with 'valid' padding");
        return {(in - span) / stride + 1, 0};
    }
    if (padding == "same") {
        std::int64_t out = (in + stride - 1) / stride;
        std::int64_t total = std::max<std::int64_t>((out - 1) * stride + span - in, 0);
        return {out, total / 2};
    }
    if (padding == "causal") {
        return {(in - 1) / stride + 1, span - 1};
    }
    throw UnsupportedError(op.describe() + ": padding '" + padding + "' (expected valid, same or causal)");
}

}  // namespace graft::ops
