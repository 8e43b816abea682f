// The elementwise family: ops over values of one shape, in any order.
//   Identity  x                 y = x (inference no-ops: Dropout, noise layers).
//   Merge     x0, x1, ...       attr op: add, sub (two inputs), mul, avg, max or min of inputs
//                               of one shape.
//   Softmax   x                 attr axis: softmax along that axis.
#pragma once

#include "graft/registry.hpp"
#include "graft_rt/elementwise.hpp"

namespace graft::ops {

struct MergeAttrs {
    graft_rt::MergeOp op = graft_rt::MergeOp::add;
    /// UnsupportedError naming the op for a merge outside the list.
    static MergeAttrs parse(const Operator& op);
};

}  // namespace graft::ops
