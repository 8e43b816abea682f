// The affine family: parameters over some axes of x applied elementwise, in any order of x.
//   BiasAdd             x, b              attr axis: y = x + b[i] along `axis` (b 1-D; Keras'
//                                         per-feature bias, TF's BiasAdd).
//   Affine              x, scale, shift   attr axes: y = x * scale + shift, constants over `axes`
//                                         (flattened in that order; none: scalars); asks for
//                                         `axes` last (Keras Rescaling, Normalization,
//                                         multi-axis BatchNormalization).
//   BatchNormalization  x, mean, var, gamma?, beta?   attrs axis, epsilon: inference batch
//                                         normalization along `axis`, one scale and shift per
//                                         index once folded (BatchNormAttrs::fold).
//   PReLU               x, alpha          attr batch_axis: y = x < 0 ? alpha * x : x, alpha over
//                                         every axis of x but the batch (its own order names
//                                         them); asks for the batch axis first.
#pragma once

#include <vector>

#include "graft/registry.hpp"

namespace graft::ops {

struct BatchNormAttrs {
    Axis axis;
    double epsilon;
    static BatchNormAttrs parse(const Operator& op);

    /// One scale and shift per index of `axis`: y = x * scale + shift.
    struct Folded {
        std::vector<float> scale, shift;
    };
    /// scale = gamma / sqrt(var + epsilon), shift = beta - mean * scale (gamma 1, beta 0 when
    /// absent), computed in double; UnsupportedError naming the op unless its parameters are
    /// constants.
    Folded fold(const Operator& op) const;
};

}  // namespace graft::ops
