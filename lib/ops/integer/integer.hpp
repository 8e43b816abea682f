// The integer family: ops on values of other dtypes than float32 (graft/ir/dtype.hpp: held as
// exact float32 values).
//   Cast     x            attr to (a dtype name: float32, int32, int64, uint8, uint16, int8, bool).
//                         y = x converted (graft_rt::cast); y's dtype is `to`. x may be of any dtype.
//   Gather   x, indices   attr axis (an axis of x). y = x with `axis` replaced by the axes of
//                         indices (which x must not have): y[.., j.., ..] = x[.., indices[j..], ..];
//                         a negative index counts from the end, one out of range gives zeros.
//                         indices may be of any dtype (floats are truncated).
//   Where    c, a, b      y = c != 0 ? a : b, all three with the same axes and sizes (broadcast
//                         before); c may be of any dtype, y has a's.
//   OneHot   indices, values, depth?   attrs axis (a new axis), depth (>= 1). y = indices' axes
//                         (their memory order) then `axis` of size depth: values[1] (on) where
//                         the position along `axis` is the index (truncated; negative: from the
//                         end), values[0] (off) elsewhere; an index out of range gives a row of
//                         off. Optional input depth (one value): the depth fed when the model runs,
//                         checked against attr depth (NaN throughout when they differ).
// The kernels are graft_rt/integer.hpp's on both backends.
#pragma once

#include <cstdint>

#include "graft/ir/operator.hpp"
#include "graft_rt/integer.hpp"

namespace graft::ops {

struct CastAttrs {
    graft_rt::CastTo to = graft_rt::CastTo::float32;
    DType dtype = DType::float32;
    /// UnsupportedError naming the op for a target outside the list.
    static CastAttrs parse(const Operator& op);
};

struct GatherAttrs {
    Axis axis;
    static GatherAttrs parse(const Operator& op);
    /// The kernel's view of x [outer, len, inner] (x's memory order, around `axis`) and M indices.
    struct Geometry {
        std::int64_t outer = 1, len = 1, inner = 1, m = 1;
    };
    Geometry geometry(const Operator& op) const;
};

struct OneHotAttrs {
    Axis axis;
    std::int64_t depth = 1;
    /// Checks depth (ShapeError naming the op), values (2 of them) and that indices lack `axis`.
    static OneHotAttrs parse(const Operator& op);
};

}  // namespace graft::ops
