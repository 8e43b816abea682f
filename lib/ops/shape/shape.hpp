// The shape family: ops that move elements without arithmetic. Reshape (a view), Transpose,
// Concat, Reverse, Pad (zero padding and cropping), DepthToSpace and SpaceToDepth. Their typed attributes (the names are in
// ops/op_types.hpp), read once and shared by the schemas, the native kernel builders and the C++
// emitters (shape.cpp); the kernels are graft_rt's (graft_rt/shape.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graft/ir/operator.hpp"

namespace graft::ops {

/// Reshape: x's elements, read in order `in_order`, viewed as `out_order` with `shape`. Entry k
/// of `follow` (optional: "", an axis of x, or like:AXIS, an axis of the optional input `like`,
/// which is read for its shape only) makes shape[k] that axis' size, whatever it is (a free
/// size, fixed per run); of the other entries one may be kDynamic, solved from x's element count.
struct ReshapeAttrs {
    Order in_order, out_order;
    Shape shape;
    std::vector<std::string> follow;  ///< empty, or one entry per dimension of `shape`
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

/// DepthToSpace / SpaceToDepth: blocks of `block` entries along each of the axes `axes` (in that
/// order) taken from / put into the channel axis `axis`. DepthToSpace splits x's channel c into
/// (i1, i2, ..., c') with mode DCR (ONNX's default, TF's) or (c', i1, i2, ...) with CRD, and puts
/// entry (i1, i2, ...) of the block at y[..., s1 * block + i1, s2 * block + i2, ...]; SpaceToDepth
/// is its inverse. Both are a transpose of views of x and y (graft_rt::transpose), in any layout.
struct BlockAttrs {
    Axis axis = Axis::C;
    Order axes;
    std::int64_t block = 1;
    bool crd = false;
    static BlockAttrs parse(const Operator& op);
    /// y's shape (x's order); ShapeError when the lengths do not divide.
    Shape out_shape(const Operator& op) const;
    /// The transpose that does it: x viewed with its channel (DepthToSpace) or its spatial axes
    /// (SpaceToDepth) split. UnsupportedError beyond graft_rt::max_rank axes of that view.
    TransposeAttrs::Geometry geometry(const Operator& op) const;
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

/// Pad: along the axes `axes`, begin[i] entries before and end[i] after (negative: cropped);
/// `mode` "constant" (with `value`, 0 by default), "edge" or "reflect" (graft_rt::pad_mode).
struct PadAttrs {
    Order axes;
    std::vector<std::int64_t> begin, end;
    int mode = 0;  ///< graft_rt::pad_mode
    float value = 0.f;
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
