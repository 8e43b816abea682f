// graft_rt/act.hpp - activations with Keras semantics; also the fused epilogues of Linear and the
// convolutions.
#pragma once

#include <algorithm>
#include <cmath>

#include "graft_rt/core.hpp"

namespace graft_rt {

/// THE activation table, one line each: X(name, value of input v with parameters a). Everything
/// else (the Act enum, the names graft's IR uses, the generated code's names and the reference
/// kernel) is expanded from it, so adding an activation is one line here.
#define GRAFT_RT_ACTIVATIONS(X)                                                                    \
    X(linear, v)                                                                         \
    X(relu, v > 0.f ? v : 0.f)                                                             \
    X(sigmoid, sigmoid(v))                                                              \
    X(tanh, std::tanh(v))                                                                  \
    /* log(1 + e^v) without overflow */                                                            \
    X(softplus, std::max(v, 0.f) + std::log1p(std::exp(-std::fabs(v))))                \
    X(softsign, v / (1.f + std::fabs(v)))                                              \
    X(elu, v > 0.f ? v : a.alpha * std::expm1(v))                                           \
    X(selu, v > 0.f ? kSeluScale * v : kSeluScaleAlpha * std::expm1(v))                    \
    /* Keras 2: clip(0.2v + 0.5, 0, 1) */                                                          \
    X(hard_sigmoid, std::min(std::max(0.2f * v + 0.5f, 0.f), 1.f))                 \
    /* Keras 3: relu6(v + 3) / 6 */                                                                \
    X(hard_sigmoid_keras3, std::min(std::max(v + 3.f, 0.f), 6.f) / 6.f)     \
    X(swish, v * sigmoid(v))                                                              \
    /* 0.5v(1 + erf(v / sqrt 2)), with erfc for the precision at negative v */                     \
    X(gelu, 0.5f * v * std::erfc(-v * 0.70710678118654752f))                               \
    X(gelu_tanh, 0.5f * v * (1.f + std::tanh(kSqrt2OverPi * (v + 0.044715f * v * v * v)))) \
    X(exponential, std::exp(v))                                                     \
    X(leaky_relu, v < 0.f ? a.alpha * v : v)                                         \
    X(thresholded_relu, v > a.alpha ? v : 0.f)                                 \
    /* the Keras ReLU layer: max_value, negative_slope (alpha), threshold */                       \
    X(relu_general, relu_general(v, a))                                            \
    X(erf, std::erf(v))                                                                            \
    /* ONNX's unary math (exp is `exponential` above) */                                           \
    X(abs, std::fabs(v))                                                                           \
    X(neg, -v)                                                                                     \
    X(log, std::log(v))                                                                            \
    X(sqrt, std::sqrt(v))                                                                          \
    X(reciprocal, 1.f / v)                                                                         \
    X(floor, std::floor(v))                                                                        \
    X(ceil, std::ceil(v))                                                                          \
    /* half to even (ONNX Round), in the default rounding mode */                                  \
    X(round, std::nearbyint(v))                                                                    \
    X(sign, v > 0.f ? 1.f : (v < 0.f ? -1.f : 0.f))                                                \
    X(sin, std::sin(v))                                                                            \
    X(cos, std::cos(v))                                                                            \
    X(tan, std::tan(v))                                                                            \
    X(asin, std::asin(v))                                                                          \
    X(acos, std::acos(v))                                                                          \
    X(atan, std::atan(v))                                                                          \
    X(sinh, std::sinh(v))                                                                          \
    X(cosh, std::cosh(v))                                                                          \
    X(asinh, std::asinh(v))                                                                        \
    X(acosh, std::acosh(v))                                                                        \
    X(atanh, std::atanh(v))                                                                        \
    /* max(0, v) + min(0, alpha (e^(v / alpha) - 1)) */                                            \
    X(celu, std::max(v, 0.f) + std::min(0.f, a.alpha * std::expm1(v / a.alpha)))                   \
    /* v relu6(v + 3) / 6 (ONNX HardSwish, Keras 3 hard_swish) */                                  \
    X(hard_swish, v * std::min(std::max(v / 6.f + 0.5f, 0.f), 1.f))                                \
    /* clip(alpha v + beta, 0, 1): beta in the field `threshold` */                                \
    X(hard_sigmoid_general, std::min(std::max(a.alpha * v + a.threshold, 0.f), 1.f))               \
    /* ONNX Shrink: lambd in `alpha`, bias in `threshold` */                                       \
    X(shrink, v < -a.alpha ? v + a.threshold : (v > a.alpha ? v - a.threshold : 0.f))              \
    /* min(max(v, lo), hi): lo in `alpha`, hi in `max_value` (no "none": pass +-FLT_MAX) */        \
    X(clip, std::min(std::max(v, a.alpha), a.max_value))

enum class Act : int {
#define GRAFT_RT_ACT_ENUM(kind, value) kind,
    GRAFT_RT_ACTIVATIONS(GRAFT_RT_ACT_ENUM)
#undef GRAFT_RT_ACT_ENUM
};

struct ActParams {
    Act kind = Act::linear;
    float alpha = 0.f;       // elu / celu alpha, leaky slope, thresholded_relu theta, relu_general negative
                             // slope, hard_sigmoid_general alpha, shrink lambd, clip's lower bound
    float max_value = -1.f;  // relu_general: < 0 means none; clip's upper bound
    float threshold = 0.f;   // relu_general; hard_sigmoid_general beta, shrink bias
};

constexpr float kSeluScale = 1.0507009873554805f;
constexpr float kSeluScaleAlpha = static_cast<float>(1.0507009873554805 * 1.6732632423543772);
constexpr float kSqrt2OverPi = 0.79788456080286536f;

inline float sigmoid(float v) {
    if (v >= 0.f) return 1.f / (1.f + std::exp(-v));  // never exponentiates a large positive number
    const float e = std::exp(v);
    return e / (1.f + e);
}

/// keras.backend.relu(v, alpha=negative_slope, max_value, threshold).
inline float relu_general(float v, const ActParams& a) {
    float t = a.threshold != 0.f ? (v > a.threshold ? v : 0.f) : (v > 0.f ? v : 0.f);
    if (a.max_value >= 0.f) t = std::min(std::max(t, 0.f), a.max_value);
    if (a.alpha != 0.f) t -= a.alpha * std::max(a.threshold - v, 0.f);
    return t;
}

/// The name of an activation in graft's IR ("relu"), or null for a value outside the table.
inline const char* act_name(Act kind) {
    switch (kind) {
#define GRAFT_RT_ACT_NAME(kind, value) \
    case Act::kind: return #kind;
        GRAFT_RT_ACTIVATIONS(GRAFT_RT_ACT_NAME)
#undef GRAFT_RT_ACT_NAME
    }
    return nullptr;
}

// Element i of y depends on element i of x only, also when x and y are the same memory (in
// place): the loops below tell GCC so, or it would check for overlap at run time and take its
// scalar loop for every in-place activation. (Clang's counterpart, vectorize(assume_safety),
// warns wherever a loop cannot be vectorized, as those calling libm cannot: not used.)
#if defined(__GNUC__) && !defined(__clang__)
#define GRAFT_RT_ELEMENTWISE_LOOP _Pragma("GCC ivdep")
#else
#define GRAFT_RT_ELEMENTWISE_LOOP
#endif

/// y[i] = act(x[i]) for i < n; x and y may be the same memory.
inline void activation(const float* x, float* y, i64 n, const ActParams& params) {
    const ActParams a = params;  // a local copy: the loops need not reload it after every store to y
    switch (a.kind) {
#define GRAFT_RT_ACT_CASE(kind, value)  \
    case Act::kind:                           \
        GRAFT_RT_ELEMENTWISE_LOOP             \
        for (i64 i = 0; i < n; ++i) {         \
            const float v = x[i];             \
            y[i] = value;                     \
        }                                     \
        return;
        GRAFT_RT_ACTIVATIONS(GRAFT_RT_ACT_CASE)
#undef GRAFT_RT_ACT_CASE
    }
    copy(x, y, n);  // not in the table: unreachable for a value made from it
}

}  // namespace graft_rt
