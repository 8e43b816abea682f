// The normalization family: LayerNorm, GroupNorm, L2Normalize (Keras LayerNormalization,
// GroupNormalization, UnitNormalization and the normalizing of Dot(normalize=True)) and LRN
// (ONNX's local response normalization).
//   LayerNorm   x, gamma?, beta?  attrs axes (names), epsilon: mean / variance over `axes`;
//               gamma / beta hold the product of those sizes, flattened in the order of `axes`.
//   GroupNorm   x, gamma?, beta?  attrs batch_axis, axis, groups, epsilon: statistics per batch
//               item and group of `axis` over every other axis.
//   L2Normalize x                 attrs axes, epsilon: x / sqrt(max(sum x^2, epsilon)).
//   LRN         x                 attrs axis, size, alpha, beta, bias: x / (bias + alpha / size *
//               sum of x^2 over `size` neighbours along `axis`) ^ beta; any layout.
// Each op asks for its reduced axes last (GroupNorm: batch first, axis last), so the kernels
// (graft_rt/normalization.hpp) see rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graft/ir/operator.hpp"

namespace graft::ops {

/// LayerNorm and L2Normalize: statistics over `axes`, which the op asks for last (in that order),
/// so that x is rows [m, k] with k the product of their sizes.
struct RowNormAttrs {
    std::vector<Axis> axes;
    float epsilon;

    static RowNormAttrs parse(const Operator& op);
    /// The order the op reads x in: x's axes with `axes` last (ShapeError if x lacks one).
    Order order(const Operator& op) const;
    struct Rows {
        std::int64_t m, k;
    };
    Rows rows(const Variable& x) const;
    /// "HW": the axes' names, for comments.
    std::string names() const;
};

/// GroupNorm: `groups` contiguous groups of the channel axis `axis`; the op reads x as
/// [n (batch_axis), s (every other axis), c (axis)].
struct GroupNormAttrs {
    Axis batch, axis;
    std::int64_t groups;
    float epsilon;

    static GroupNormAttrs parse(const Operator& op);
    /// batch_axis first, axis last (ShapeError unless x has both, distinct).
    Order order(const Operator& op) const;
    struct Geometry {
        std::int64_t n, s, c;
    };
    Geometry geometry(const Variable& x) const;
};

/// LRN across axis `axis` (x viewed as [outer, len, inner] around it).
struct LrnAttrs {
    Axis axis = Axis::C;
    std::int64_t size = 1;
    float alpha = 0, beta = 0, bias = 0;
    /// ShapeError for a size below 1.
    static LrnAttrs parse(const Operator& op);
};

}  // namespace graft::ops
