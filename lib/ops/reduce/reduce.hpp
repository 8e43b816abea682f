// The reduce family: reductions over named axes, in any memory order of x.
//   Reduce   x   attrs kind (sum | mean | max | min | prod | l1 | l2 | sum_square | log_sum |
//                log_sum_exp), axes (the reduced axes' names) and keepdims (bool, default false:
//                the reduced axes leave y's order; true: they stay, of size 1). y's order is x's
//                without (or with size-1) reduced axes. Empty axes reduce nothing (each entry
//                alone: sum is x, l2 is |x|).
//   ArgMax, ArgMin   x   attrs axis, keepdims (default false) and select_last_index (default
//                false: the first of equal entries): the index along `axis` of the largest /
//                smallest entry, as a float32 value.
//   Hardmax  x   attr axis: 1 at the first largest entry along `axis`, 0 elsewhere (x's shape).
//   Det      x   attr axes (rows, columns: x's last two in memory): the determinant of each
//                square matrix; y is x without them.
// The kernels are graft_rt's (graft_rt/reduce.hpp) on both backends.
//
// Ops along one axis (along_axis.cpp, kernels graft_rt/along_axis.hpp), outputs in x's order:
//   TopK     x, k?  attrs axis, k (1 to x's size along axis), largest (default true), sorted
//                (ignored: always sorted). values, indices: x with `axis` of size k holding the k
//                largest (smallest) entries, equal values by the lower index (NaN: above every
//                number), and their indices as float32 values. Optional input k (one value): the
//                k the model is fed when it runs; one that differs from attr k gives NaN values.
//   CumSum   x   attrs axis, exclusive, reverse (default false): running sums along `axis`.
#pragma once

#include <cstdint>
#include <vector>

#include "graft/ir/operator.hpp"
#include "graft_rt/reduce.hpp"

namespace graft::ops {

struct ReduceAttrs {
    graft_rt::ReduceKind kind = graft_rt::ReduceKind::sum;
    std::vector<Axis> axes;
    bool keepdims = false;
    /// UnsupportedError for an unknown kind; ShapeError for an axis x lacks or one listed twice.
    static ReduceAttrs parse(const Operator& op);

    /// The kernel's view of x: its kept axes (y's, in x's memory order) and its reduced ones,
    /// each with x's strides; axes of size 1 left out, at least one of each (size 1, stride 0).
    /// UnsupportedError beyond graft_rt::reduce_max_rank axes of either.
    struct Geometry {
        std::vector<std::int64_t> kept, kept_strides, reduced, reduced_strides;
    };
    Geometry geometry(const Operator& op) const;
};

/// ArgMax / ArgMin.
struct ArgReduceAttrs {
    Axis axis = Axis::C;
    bool keepdims = false, select_last_index = false;
    static ArgReduceAttrs parse(const Operator& op);
};

}  // namespace graft::ops
