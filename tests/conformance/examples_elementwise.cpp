// Conformance examples: activations, elementwise merges, per-channel maps, softmax.
#include <algorithm>
#include <cmath>

#include "reference.hpp"

namespace conformance {

namespace {

double sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

/// Each activation from its Keras definition, in double.
double act(const std::string& f, double v, double alpha, double max_value, double threshold) {
    if (f == "linear") return v;
    if (f == "relu") return std::max(v, 0.0);
    if (f == "sigmoid") return sigmoid(v);
    if (f == "tanh") return std::tanh(v);
    if (f == "softplus") return std::log1p(std::exp(v));
    if (f == "softsign") return v / (1 + std::fabs(v));
    if (f == "elu") return v > 0 ? v : alpha * (std::exp(v) - 1);
    if (f == "selu") return 1.0507009873554805 * (v > 0 ? v : 1.6732632423543772 * (std::exp(v) - 1));
    if (f == "hard_sigmoid") return std::clamp(0.2 * v + 0.5, 0.0, 1.0);
    if (f == "hard_sigmoid_keras3") return std::clamp(v / 6 + 0.5, 0.0, 1.0);
    if (f == "swish") return v * sigmoid(v);
    if (f == "gelu") return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    if (f == "gelu_tanh") return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    if (f == "exponential") return std::exp(v);
    if (f == "leaky_relu") return v < 0 ? alpha * v : v;
    if (f == "thresholded_relu") return v > alpha ? v : 0;
    if (f == "relu_general") {  // keras.backend.relu(v, alpha=negative_slope, max_value, threshold)
        double t = v > threshold ? v : 0;
        if (max_value >= 0) t = std::min(t, max_value);
        return v > threshold ? t : alpha * (v - threshold);
    }
    if (f == "erf") return std::erf(v);
    // ONNX's unary math, from its operator definitions (alpha, max_value and threshold carry the
    // parameters: act.hpp)
    if (f == "abs") return std::fabs(v);
    if (f == "neg") return -v;
    if (f == "log") return std::log(v);
    if (f == "sqrt") return std::sqrt(v);
    if (f == "reciprocal") return 1 / v;
    if (f == "floor") return std::floor(v);
    if (f == "ceil") return std::ceil(v);
    if (f == "round") {  // half to even
        const double r = std::floor(v), d = v - r;
        return d < 0.5 ? r : d > 0.5 ? r + 1 : (std::fmod(r, 2.0) == 0 ? r : r + 1);
    }
    if (f == "sign") return v > 0 ? 1 : v < 0 ? -1 : 0;
    if (f == "sin") return std::sin(v);
    if (f == "cos") return std::cos(v);
    if (f == "tan") return std::tan(v);
    if (f == "asin") return std::asin(v);
    if (f == "acos") return std::acos(v);
    if (f == "atan") return std::atan(v);
    if (f == "sinh") return std::sinh(v);
    if (f == "cosh") return std::cosh(v);
    if (f == "asinh") return std::log(v + std::sqrt(v * v + 1));
    if (f == "acosh") return std::log(v + std::sqrt(v * v - 1));
    if (f == "atanh") return 0.5 * std::log((1 + v) / (1 - v));
    if (f == "celu") return std::max(0.0, v) + std::min(0.0, alpha * (std::exp(v / alpha) - 1));
    if (f == "hard_swish") return v * std::clamp(v / 6 + 0.5, 0.0, 1.0);
    if (f == "hard_sigmoid_general") return std::clamp(alpha * v + threshold, 0.0, 1.0);
    if (f == "shrink") return v < -alpha ? v + threshold : v > alpha ? v - threshold : 0;
    if (f == "clip") return std::clamp(v, alpha, max_value);
    throw std::runtime_error("no reference for activation " + f);
}

Example activation(const std::string& f, double alpha = 0, double max_value = -1, double threshold = 0, float lo = -4.f,
                   float hi = 4.f) {
    Example e;
    e.op_type = "Activation";
    e.name = f + (alpha != 0 ? " alpha " + std::to_string(alpha) : "") + (max_value >= 0 ? " max_value" : "") +
             (threshold != 0 ? " threshold" : "");
    e.attrs.set("activation", f);
    if (alpha != 0) e.attrs.set("alpha", alpha);
    if (max_value >= 0) e.attrs.set("max_value", max_value);
    if (threshold != 0) e.attrs.set("threshold", threshold);
    if (lo != -4.f || hi != 4.f) e.name += " on [" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
    e.inputs = {input("x", OrderNHWC, {2, 3, 2, 5}, 1, false, lo, hi)};
    e.reference = [=](const std::vector<Operand>& in) {
        return std::vector<Expected>{like("y", in[0], [&](const Pos& p, std::int64_t) { return act(f, at(in[0], p), alpha, max_value, threshold); })};
    };
    if (f == "exponential") e.rtol = 1e-5, e.atol = 1e-4;
    return e;
}

Example merge(const std::string& op, int n) {
    Example e;
    e.op_type = "Merge";
    e.name = op + " of " + std::to_string(n);
    e.attrs.set("op", op);
    for (int i = 0; i < n; ++i) e.inputs.push_back(input("x" + std::to_string(i), OrderNTC, {2, 3, 4}, 10 + i));
    e.reference = [=](const std::vector<Operand>& in) {
        return std::vector<Expected>{like("y", in[0], [&](const Pos& p, std::int64_t) {
            double r = at(in[0], p);
            for (int i = 1; i < n; ++i) {
                const double v = at(in[static_cast<std::size_t>(i)], p);
                if (op == "add" || op == "avg") r += v;
                else if (op == "sub") r -= v;
                else if (op == "mul") r *= v;
                else if (op == "max") r = std::max(r, v);
                else if (op == "min") r = std::min(r, v);
            }
            return op == "avg" ? r / n : r;
        })};
    };
    return e;
}

Example softmax(Order order, Shape shape, Axis axis) {
    Example e;
    e.op_type = "Softmax";
    e.name = "along " + axis.name() + " of " + order.str();
    e.attrs.set("axis", axis);
    e.inputs = {input("x", order, shape, 20, false, -5.f, 5.f)};
    e.reference = [=](const std::vector<Operand>& in) {
        const Operand& x = in[0];
        const std::int64_t len = x.shape[x.order.index(axis)];
        return std::vector<Expected>{like("y", x, [&](const Pos& p, std::int64_t) {
            double sum = 0;
            Pos q = p;
            for (std::int64_t j = 0; j < len; ++j) q[axis.name()] = j, sum += std::exp(at(x, q));
            return std::exp(at(x, p)) / sum;
        })};
    };
    return e;
}

}  // namespace

std::vector<Example> elementwise_examples() {
    std::vector<Example> v;
    for (const char* f : {"linear", "relu", "sigmoid", "tanh", "softplus", "softsign", "selu", "hard_sigmoid",
                          "hard_sigmoid_keras3", "swish", "gelu", "gelu_tanh", "exponential", "erf"})
        v.push_back(activation(f));
    v.push_back(activation("elu", 0.7));
    v.push_back(activation("leaky_relu", 0.2));
    v.push_back(activation("thresholded_relu", 1.0));
    v.push_back(activation("relu_general", 0.1, 6.0, 0.5));
    v.push_back(activation("relu_general", 0.0, 1.5, 0.0));
    // ONNX's unary math
    for (const char* f : {"abs", "neg", "floor", "ceil", "round", "sign", "sin", "cos", "atan", "sinh", "cosh", "asinh",
                          "hard_swish"})
        v.push_back(activation(f));
    for (const char* f : {"log", "sqrt", "reciprocal"}) v.push_back(activation(f, 0, -1, 0, 0.1f, 4.f));
    for (const char* f : {"asin", "acos", "atanh"}) v.push_back(activation(f, 0, -1, 0, -0.95f, 0.95f));
    v.push_back(activation("tan", 0, -1, 0, -1.3f, 1.3f));
    v.push_back(activation("acosh", 0, -1, 0, 1.f, 5.f));
    v.push_back(activation("celu", 0.7));
    v.push_back(activation("hard_sigmoid_general", 0.3, -1, 0.4));
    v.push_back(activation("shrink", 1.5, -1, 0.25));
    v.push_back(activation("clip", -1.0, 2.5));

    Example id;
    id.op_type = "Identity";
    id.name = "copy";
    id.inputs = {input("x", OrderNTC, {2, 3, 4}, 2)};
    id.reference = [](const std::vector<Operand>& in) {
        return std::vector<Expected>{like("y", in[0], [&](const Pos& p, std::int64_t) { return at(in[0], p); })};
    };
    v.push_back(id);

    for (const char* op : {"add", "sub", "mul", "avg", "max", "min"}) v.push_back(merge(op, 2));
    for (const char* op : {"add", "mul", "avg", "max"}) v.push_back(merge(op, 3));

    Example bias;
    bias.op_type = "BiasAdd";
    bias.name = "along C of NHWC";
    bias.attrs.set("axis", Axis::C);
    bias.inputs = {input("x", OrderNHWC, {2, 3, 2, 5}, 3), input("b", OrderC, {5}, 4, true)};
    bias.reference = [](const std::vector<Operand>& in) {
        return std::vector<Expected>{like("y", in[0], [&](const Pos& p, std::int64_t) { return at(in[0], p) + at(in[1], p); })};
    };
    v.push_back(bias);

    Example bn;
    bn.op_type = "BatchNormalization";
    bn.name = "along C, epsilon 1e-3";
    bn.attrs.set("axis", Axis::C);
    bn.attrs.set("epsilon", 1e-3);
    bn.inputs = {input("x", OrderNHWC, {2, 3, 2, 4}, 5), input("mean", OrderC, {4}, 6, true),
                 input("var", OrderC, {4}, 7, true, 0.1f, 2.f), input("gamma", OrderC, {4}, 8, true),
                 input("beta", OrderC, {4}, 9, true)};
    bn.reference = [](const std::vector<Operand>& in) {
        return std::vector<Expected>{like("y", in[0], [&](const Pos& p, std::int64_t) {
            return (at(in[0], p) - at(in[1], p)) / std::sqrt(at(in[2], p) + 1e-3) * at(in[3], p) + at(in[4], p);
        })};
    };
    v.push_back(bn);

    Example affine;
    affine.op_type = "Affine";
    affine.name = "scale and shift over H and C";
    affine.attrs.set("axes", graft::Order{Axis::H, Axis::C});
    affine.inputs = {input("x", OrderNHWC, {2, 3, 2, 4}, 11), input("scale", graft::Order{Axis::H, Axis::C}, {3, 4}, 12, true),
                     input("shift", graft::Order{Axis::H, Axis::C}, {3, 4}, 13, true)};
    affine.reference = [](const std::vector<Operand>& in) {
        return std::vector<Expected>{like("y", in[0], [&](const Pos& p, std::int64_t) { return at(in[0], p) * at(in[1], p) + at(in[2], p); })};
    };
    v.push_back(affine);

    Example prelu;
    prelu.op_type = "PReLU";
    prelu.name = "alpha over H, W, C";
    prelu.attrs.set("batch_axis", Axis::N);
    prelu.inputs = {input("x", OrderNHWC, {2, 3, 2, 4}, 14), input("alpha", graft::Order{Axis::H, Axis::W, Axis::C}, {3, 2, 4}, 15, true, 0.f, 1.f)};
    prelu.reference = [](const std::vector<Operand>& in) {
        return std::vector<Expected>{like("y", in[0], [&](const Pos& p, std::int64_t) {
            const double x = at(in[0], p);
            return x < 0 ? at(in[1], p) * x : x;
        })};
    };
    v.push_back(prelu);

    v.push_back(softmax(OrderNC, {3, 7}, Axis::C));
    v.push_back(softmax(OrderNTC, {2, 5, 3}, Axis::T));
    return v;
}

}  // namespace conformance
