// The shape family: ops that move elements without arithmetic. Reshape (a view), Transpose,
// Concat, Reverse and Pad (zero padding and cropping). Their typed attributes (the names are in
// ops/op_types.hpp), read once and shared by the schemas, the native kernel builders and the C++
// emitters (shape.cpp); the kernels are graft_rt's (graft_rt/shape.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "graft/ir/operator.hpp"

namespace graft::ops {

/// Reshape: x's elements, read in order `in_order`, viewed as `out_order` with `shape` (one
/// entry may be kDynamic, solved from x's element count).
struct ReshapeAttrs {
    Order in_order, out_order;
    Shape shape;
    static ReshapeAttrs parse(const Operator& op);
};

/// Transpose: y = x laid out in order `order` (the same axes).
struct TransposeAttrs {
    Order order;
    static TransposeAttrs parse(const Operator& op);
    /// The kernel's view: x's shape and perm (y's axis i is x's axis perm[i]). UnsupportedError
    /// beyond graft_rt::max_rank axes.
    struct Geometry {
        Shape in_shape;
        std::vector<int> perm;
    };
    Geometry geometry(const Operator& op) const;
};

/// Concat: inputs x0, x1, ... joined along axis `axis`.
struct ConcatAttrs {
    Axis axis = Axis::C;
    static ConcatAttrs parse(const Operator& op);
    /// Every input as [outer, lens[i], inner] (the same outer and inner for all).
    struct Geometry {
        std::int64_t outer = 1, inner = 1;
        std::vector<std::int64_t> lens;
    };
    Geometry geometry(const Operator& op) const;
};

/// Reverse: y = x with the entries along axis `axis` in reverse order (x viewed as
/// [outer, len, inner] around it: ops::split_at).
struct ReverseAttrs {
    Axis axis = Axis::T;
    static ReverseAttrs parse(const Operator& op);
};

/// Pad: along the axes `axes`, begin[i] entries before and end[i] after (negative: cropped).
struct PadAttrs {
    Order axes;
    std::vector<std::int64_t> begin, end;
    static PadAttrs parse(const Operator& op);
    /// In x's memory order: its shape, y's shape and the leading pad of every axis.
    /// ShapeError when an axis would be left empty; UnsupportedError beyond graft_rt::max_rank.
    struct Geometry {
        Shape in, out;
        std::vector<std::int64_t> begin;
    };
    Geometry geometry(const Operator& op) const;
};

}  // namespace graft::ops
