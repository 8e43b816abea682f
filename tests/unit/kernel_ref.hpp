// tests/unit/kernel_ref.hpp - what the kernel tests share: random inputs, the closeness check,
// double-precision reference convolution and pooling loops and reference activations written
// from their Keras definitions.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/kernels.hpp"

namespace kernel_ref {

using namespace graft::cpu;
using i64 = std::int64_t;
using dvec = std::vector<double>;
using fvec = std::vector<float>;

inline std::mt19937& rng() {
    static std::mt19937 g(12345);
    return g;
}

/// n floats uniform in [lo, hi) from g (tests that keep their own seed pass their generator).
inline fvec rand_vec(std::mt19937& g, i64 n, float lo = -1.f, float hi = 1.f) {
    std::uniform_real_distribution<float> d(lo, hi);
    fvec v(static_cast<std::size_t>(n));
    for (auto& e : v) e = d(g);
    return v;
}
inline fvec rand_vec(i64 n, float lo = -1.f, float hi = 1.f) { return rand_vec(rng(), n, lo, hi); }

inline int rand_int(std::mt19937& g, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); }
inline int rand_int(int lo, int hi) { return rand_int(rng(), lo, hi); }

/// Largest error relative to max(1, |ref|); reports the first offending index.
inline void check_close(const fvec& got, const dvec& ref, double tol = 1e-5, const std::string& what = "") {
    REQUIRE(got.size() == ref.size());
    double worst = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double err = std::fabs(static_cast<double>(got[i]) - ref[i]) / std::max(1.0, std::fabs(ref[i]));
        if (!(err <= worst)) {  // also catches NaN
            worst = std::isnan(err) ? std::numeric_limits<double>::infinity() : err;
            at = i;
        }
    }
    INFO(what << " worst relative error " << worst << " at " << at << " (got "
              << (got.empty() ? 0.f : got[at]) << ", want " << (ref.empty() ? 0.0 : ref[at]) << ")");
    CHECK(worst <= tol);
}

// ---------------------------------------------------------------- reference windows

/// One spatial axis of a sliding window: input size, kernel size, stride, dilation, leading pad,
/// output size.
struct Axis {
    i64 in, k, stride, dil, pad, out;
};
using Axes = std::vector<Axis>;

inline i64 in_positions(const Axes& axes) {
    i64 n = 1;
    for (const Axis& a : axes) n *= a.in;
    return n;
}
inline i64 out_positions(const Axes& axes) {
    i64 n = 1;
    for (const Axis& a : axes) n *= a.out;
    return n;
}

/// Calls f(o, i, t) for every output position o and, in order, every kernel tap t whose input
/// position i (per axis o * stride - pad + t * dil) lies inside the input; o, i and t are
/// row-major over the axes.
template <class F>
void for_each_tap(const Axes& axes, F&& f) {
    i64 taps = 1;
    for (const Axis& a : axes) taps *= a.k;
    for (i64 o = 0, outs = out_positions(axes); o < outs; ++o)
        for (i64 t = 0; t < taps; ++t) {
            i64 i = 0, stride = 1, orest = o, trest = t;
            bool inside = true;
            for (std::size_t ax = axes.size(); inside && ax-- > 0;) {
                const Axis& a = axes[ax];
                const i64 at = (orest % a.out) * a.stride - a.pad + (trest % a.k) * a.dil;
                orest /= a.out, trest /= a.k;
                inside = at >= 0 && at < a.in;
                i += at * stride, stride *= a.in;
            }
            if (inside) f(o, i, t);
        }
}

/// Direct convolution in double, channels last: x (n, *in, cin), w (*k, cin / groups, cout) and an
/// optional bias -> (n, *out, cout), before any activation. groups == cin is a depthwise
/// convolution with multiplier cout / cin (Keras' depthwise kernel (*k, cin, mult) is that layout).
inline dvec conv_nd_ref(const fvec& x, const fvec& w, const float* bias, i64 n, i64 cin, i64 cout, const Axes& axes,
                        i64 groups = 1) {
    const i64 I = in_positions(axes), O = out_positions(axes), cin_g = cin / groups, cout_g = cout / groups;
    dvec y(static_cast<std::size_t>(n * O * cout));
    for (i64 b = 0; b < n; ++b) {
        for (i64 o = 0; o < O; ++o)
            for (i64 co = 0; co < cout; ++co) y[static_cast<std::size_t>((b * O + o) * cout + co)] = bias ? bias[co] : 0.0;
        for_each_tap(axes, [&](i64 o, i64 i, i64 t) {
            for (i64 co = 0; co < cout; ++co) {
                const i64 c0 = co / cout_g * cin_g;
                double& s = y[static_cast<std::size_t>((b * O + o) * cout + co)];
                for (i64 c = 0; c < cin_g; ++c)
                    s += static_cast<double>(x[static_cast<std::size_t>((b * I + i) * cin + c0 + c)]) *
                         w[static_cast<std::size_t>((t * cin_g + c) * cout + co)];
            }
        });
    }
    return y;
}

/// Max or average pooling in double, channels last: x (n, *in, c) -> (n, *out, c); averages count
/// only the taps inside the input (0 where there are none).
inline dvec pool_nd_ref(const fvec& x, i64 n, i64 c, const Axes& axes, bool max) {
    const i64 I = in_positions(axes), O = out_positions(axes);
    dvec y(static_cast<std::size_t>(n * O * c), max ? -std::numeric_limits<double>::infinity() : 0.0);
    std::vector<int> count(static_cast<std::size_t>(O));
    for (i64 b = 0; b < n; ++b) {
        std::fill(count.begin(), count.end(), 0);
        for_each_tap(axes, [&](i64 o, i64 i, i64) {
            for (i64 ch = 0; ch < c; ++ch) {
                double& acc = y[static_cast<std::size_t>((b * O + o) * c + ch)];
                const double v = x[static_cast<std::size_t>((b * I + i) * c + ch)];
                acc = max ? std::max(acc, v) : acc + v;
            }
            ++count[static_cast<std::size_t>(o)];
        });
        for (i64 o = 0; o < O; ++o)
            for (i64 ch = 0; ch < c; ++ch) {
                double& acc = y[static_cast<std::size_t>((b * O + o) * c + ch)];
                const int k = count[static_cast<std::size_t>(o)];
                acc = k == 0 ? 0.0 : (max ? acc : acc / k);
            }
    }
    return y;
}

// ---------------------------------------------------------------- reference activations

inline double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

inline double act_ref(double x, const ActParams& a) {
    switch (a.kind) {
        case Act::linear: return x;
        case Act::relu: return x > 0 ? x : 0;
        case Act::sigmoid: return sigmoid_ref(x);
        case Act::tanh: return std::tanh(x);
        case Act::softplus: return x > 30 ? x : std::log1p(std::exp(x));
        case Act::softsign: return x / (1 + std::fabs(x));
        case Act::elu: return x > 0 ? x : a.alpha * (std::exp(x) - 1);
        case Act::selu: return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * (std::exp(x) - 1));
        case Act::hard_sigmoid: return std::min(1.0, std::max(0.0, 0.2 * x + 0.5));
        case Act::hard_sigmoid_keras3: return std::min(1.0, std::max(0.0, x / 6 + 0.5));
        case Act::swish: return x * sigmoid_ref(x);
        case Act::gelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
        case Act::gelu_tanh:
            return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
        case Act::exponential: return std::exp(x);
        case Act::leaky_relu: return x < 0 ? a.alpha * x : x;
        case Act::thresholded_relu: return x > a.alpha ? x : 0;
        case Act::relu_general: {
            // keras.backend.relu(x, alpha, max_value, threshold), written as in Keras 2.3.
            const double thr = a.threshold;
            double t = thr != 0 ? (x > thr ? x : 0) : std::max(x, 0.0);
            if (a.max_value >= 0) t = std::min(std::max(t, 0.0), static_cast<double>(a.max_value));
            if (a.alpha != 0) t -= a.alpha * std::max(thr - x, 0.0);
            return t;
        }
        case Act::erf: return std::erf(x);
        // ONNX's unary math, from its operator definitions
        case Act::abs: return std::fabs(x);
        case Act::neg: return -x;
        case Act::log: return std::log(x);
        case Act::sqrt: return std::sqrt(x);
        case Act::reciprocal: return 1 / x;
        case Act::floor: return std::floor(x);
        case Act::ceil: return std::ceil(x);
        case Act::round: {  // half to even
            const double r = std::floor(x), d = x - r;
            return d < 0.5 ? r : d > 0.5 ? r + 1 : (std::fmod(r, 2.0) == 0 ? r : r + 1);
        }
        case Act::sign: return x > 0 ? 1 : x < 0 ? -1 : 0;
        case Act::sin: return std::sin(x);
        case Act::cos: return std::cos(x);
        case Act::tan: return std::tan(x);
        case Act::asin: return std::asin(x);
        case Act::acos: return std::acos(x);
        case Act::atan: return std::atan(x);
        case Act::sinh: return std::sinh(x);
        case Act::cosh: return std::cosh(x);
        case Act::asinh: return std::asinh(x);
        case Act::acosh: return std::acosh(x);
        case Act::atanh: return std::atanh(x);
        case Act::celu: return std::max(0.0, x) + std::min(0.0, a.alpha * (std::exp(x / a.alpha) - 1));
        case Act::hard_swish: return x * std::min(1.0, std::max(0.0, x / 6 + 0.5));
        case Act::hard_sigmoid_general: return std::min(1.0, std::max(0.0, a.alpha * x + a.threshold));
        case Act::shrink: return x < -a.alpha ? x + a.threshold : x > a.alpha ? x - a.threshold : 0;
        case Act::clip: return std::min(std::max(x, static_cast<double>(a.alpha)), static_cast<double>(a.max_value));
    }
    return x;
}

inline ActParams act_of(Act k, float alpha = 0.f, float max_value = -1.f, float threshold = 0.f) {
    ActParams a;
    a.kind = k;
    a.alpha = alpha;
    a.max_value = max_value;
    a.threshold = threshold;
    return a;
}

inline float act1(const ActParams& a, float x) {
    float y = 0;
    activate(&x, &y, 1, a);
    return y;
}

inline const std::vector<ActParams>& all_acts() {
    static const std::vector<ActParams> v = {
        act_of(Act::linear),         act_of(Act::relu),        act_of(Act::sigmoid),
        act_of(Act::tanh),           act_of(Act::softplus),    act_of(Act::softsign),
        act_of(Act::elu, 1.f),       act_of(Act::elu, 0.3f),   act_of(Act::selu),
        act_of(Act::hard_sigmoid),   act_of(Act::hard_sigmoid_keras3), act_of(Act::swish),
        act_of(Act::gelu),           act_of(Act::gelu_tanh),   act_of(Act::exponential),
        act_of(Act::leaky_relu, 0.3f), act_of(Act::thresholded_relu, 1.f),
        act_of(Act::relu_general, 0.f, 6.f, 0.f), act_of(Act::relu_general, 0.1f, 6.f, 0.5f),
        act_of(Act::relu_general, 0.2f, -1.f, 0.f), act_of(Act::relu_general, 0.f, -1.f, 1.f),
        act_of(Act::relu_general, 0.25f, 2.f, 0.f), act_of(Act::relu_general, 0.1f, 0.3f, 0.5f),
        act_of(Act::erf),
    };
    return v;
}

}  // namespace kernel_ref
