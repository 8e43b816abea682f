// The embedding family: lookups and Keras masks.
//   Embedding   x (float indices), table CN [V, D]  attr axis (name of the new last axis):
//               y = x's axes + axis; out-of-range or NaN indices give zero rows.
//   NonZeroMask x -> mask = (x != 0), same type (Embedding mask_zero).
//   Masking     x  attrs axis (feature axis), mask_value -> y (rows equal to mask_value
//               everywhere zeroed) and mask (x's order without `axis`).
// Kernels: graft_rt/embedding.hpp.
#pragma once

#include <cstdint>

#include "graft/ir/operator.hpp"

namespace graft::ops {

/// Embedding: the new last axis of y, and the lookup's sizes.
struct EmbeddingAttrs {
    Axis axis;

    static EmbeddingAttrs parse(const Operator& op);
    struct Lookup {
        std::int64_t m, v, d;  // indices, vocabulary, features
    };
    static Lookup lookup(const Operator& op);
};

/// Masking: the feature axis, which the op asks for last, so x is rows [m, k]; the value that
/// masks a row.
struct MaskingAttrs {
    Axis axis;
    float mask_value;

    static MaskingAttrs parse(const Operator& op);
    /// The order the op reads x in: x's axes with `axis` last.
    Order order(const Variable& x) const { return x.order().with_last(axis); }
    struct Rows {
        std::int64_t m, k;
    };
    Rows rows(const Variable& x) const;
};

}  // namespace graft::ops
