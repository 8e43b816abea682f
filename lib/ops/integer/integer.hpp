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

}  // namespace graft::ops
