// Elementwise activations (Keras semantics), also used as fused epilogues by other kernels.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu/vmath.hpp"
#include "cpu/kernels.hpp"

namespace graft::cpu {
namespace {

template <class F>
inline void apply(const float* x, float* y, std::int64_t n, F f) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

inline float sigmoid(float x) {
    // Stable for large |x|: never exponentiates a large positive number.
    if (x >= 0.f) return 1.f / (1.f + std::exp(-x));
    const float e = std::exp(x);
    return e / (1.f + e);
}

}  // namespace

void activation(const float* x, float* y, std::int64_t n, const ActParams& a) {
    switch (a.kind) {
        case Act::linear:
            if (x != y && n > 0) std::memmove(y, x, static_cast<std::size_t>(n) * sizeof(float));
            return;
        case Act::relu:
            apply(x, y, n, [](float v) { return v > 0.f ? v : 0.f; });
            return;
        case Act::sigmoid:  // vectorized (vmath.cpp), a few ulp
            vmath::sigmoid(x, y, n);
            return;
        case Act::tanh:
            vmath::tanh(x, y, n);
            return;
        case Act::softplus:
            // log(1 + e^x) = max(x, 0) + log1p(e^-|x|), exact for all x without overflow.
            apply(x, y, n, [](float v) { return std::max(v, 0.f) + std::log1p(std::exp(-std::fabs(v))); });
            return;
        case Act::softsign:
            apply(x, y, n, [](float v) { return v / (1.f + std::fabs(v)); });
            return;
        case Act::elu: {
            const float alpha = a.alpha;
            apply(x, y, n, [alpha](float v) { return v > 0.f ? v : alpha * std::expm1(v); });
            return;
        }
        case Act::selu: {
            constexpr float scale = 1.0507009873554805f;
            constexpr float scale_alpha = static_cast<float>(1.0507009873554805 * 1.6732632423543772);
            apply(x, y, n, [](float v) { return v > 0.f ? scale * v : scale_alpha * std::expm1(v); });
            return;
        }
        case Act::hard_sigmoid:
            apply(x, y, n, [](float v) { return std::min(std::max(0.2f * v + 0.5f, 0.f), 1.f); });
            return;
        case Act::hard_sigmoid_k3:
            // Keras 3: relu6(x + 3) / 6  ==  clip(x/6 + 0.5, 0, 1)
            apply(x, y, n, [](float v) { return std::min(std::max(v + 3.f, 0.f), 6.f) / 6.f; });
            return;
        case Act::swish:
            apply(x, y, n, [](float v) { return v * sigmoid(v); });
            return;
        case Act::gelu:
            // 0.5x(1 + erf(x/sqrt2)) written with erfc to keep precision for negative x.
            apply(x, y, n, [](float v) { return 0.5f * v * std::erfc(-v * 0.70710678118654752f); });
            return;
        case Act::gelu_tanh: {
            constexpr float k = 0.79788456080286536f;  // sqrt(2/pi)
            apply(x, y, n, [](float v) { return 0.5f * v * (1.f + std::tanh(k * (v + 0.044715f * v * v * v))); });
            return;
        }
        case Act::exponential:
            apply(x, y, n, [](float v) { return std::exp(v); });
            return;
        case Act::leaky_relu: {
            const float alpha = a.alpha;
            apply(x, y, n, [alpha](float v) { return v < 0.f ? alpha * v : v; });
            return;
        }
        case Act::thresholded_relu: {
            const float theta = a.alpha;
            apply(x, y, n, [theta](float v) { return v > theta ? v : 0.f; });
            return;
        }
        case Act::relu_general: {
            // Exactly keras.backend.relu(x, alpha=negative_slope, max_value, threshold):
            //   t = threshold != 0 ? (x > threshold ? x : 0) : relu(x)
            //   t = clip(t, 0, max_value)            (when max_value is given)
            //   t -= negative_slope * relu(threshold - x)
            // For threshold >= 0 (all the Keras ReLU layer accepts) this is
            //   x > threshold ? min(x, max_value) : negative_slope * (x - threshold).
            const float slope = a.alpha, thr = a.threshold, maxv = a.max_value;
            const bool clip = maxv >= 0.f;
            apply(x, y, n, [=](float v) {
                float t = thr != 0.f ? (v > thr ? v : 0.f) : (v > 0.f ? v : 0.f);
                if (clip) t = std::min(std::max(t, 0.f), maxv);
                if (slope != 0.f) t -= slope * std::max(thr - v, 0.f);
                return t;
            });
            return;
        }
    }
    // Unknown kind: behave as linear.
    if (x != y && n > 0) std::memmove(y, x, static_cast<std::size_t>(n) * sizeof(float));
}

}  // namespace graft::cpu
