// The broadcast family: elementwise ops whose inputs may lack axes of the output or have them
// once (numpy broadcasting over named axes), in any memory order.
//   Binary   a, b   attrs op (add | sub | mul | div | pow | max | min | mod | equal | less | greater |
//                   less_equal | greater_equal | and | or | xor: the last eight give 1 or 0), fmod (bool, default
//                   false: mod has the divisor's sign as in Python; true: C's fmod, the
//                   dividend's) and order (y's order). y's axes are exactly `order`'s; a's and b's
//                   axes are a subset of them, and along every axis each input either lacks it,
//                   has it once or has y's size (the largest).
//   Expand   x, like?  attrs order (y's order), shape (y's sizes in `order`; kDynamic: the size
//                   of input `like` along its axis `like_axis`, the way a model's dynamic batch
//                   reaches a value that does not depend on the inputs) and like_axis. y = x
//                   broadcast to shape (numpy's broadcast_to): x's axes are a subset of y's, each
//                   of size 1 or y's. `like` is read only for its size.
// The kernels are graft_rt::binary and graft_rt::broadcast_to (graft_rt/binary.hpp) on both
// backends.
#pragma once

#include <cstdint>
#include <vector>

#include "graft/ir/operator.hpp"
#include "graft_rt/binary.hpp"

namespace graft::ops {

struct BinaryAttrs {
    graft_rt::BinaryOp op = graft_rt::BinaryOp::add;
    Order order;
    /// UnsupportedError naming the op for an operation outside the list.
    static BinaryAttrs parse(const Operator& op);

    /// y's shape in `order` (kDynamic where an input's is and the other's is 1 or absent);
    /// ShapeError naming the op and both inputs when they do not broadcast.
    Shape out_shape(const Operator& op) const;

    /// The kernel's view: y's axes of size > 1 (at least one axis, of size 1 for a scalar), with
    /// the stride of a and of b along each (0 where the input broadcasts). UnsupportedError beyond
    /// graft_rt::binary_max_rank such axes.
    struct Geometry {
        std::vector<std::int64_t> shape, a_strides, b_strides;
    };
    Geometry geometry(const Operator& op) const;
};

struct ExpandAttrs {
    Order order;
    Shape shape;     ///< as given: kDynamic entries follow `like`
    Axis like_axis = Axis::N;  ///< read when `shape` has kDynamic entries
    static ExpandAttrs parse(const Operator& op);

    /// y's shape in `order` (kDynamic while `like`'s size is); ShapeError naming the op when x
    /// does not broadcast to it or a kDynamic entry has no `like` to follow.
    Shape out_shape(const Operator& op) const;
    /// The kernel's view: y's shape in `order` and x's stride along each of its axes (0 where x
    /// broadcasts). UnsupportedError beyond graft_rt::binary_max_rank axes.
    struct Geometry {
        std::vector<std::int64_t> shape, x_strides;
    };
    Geometry geometry(const Operator& op) const;
};

}  // namespace graft::ops
