// The linear family: matrix products over named axes.
//   Linear       y = act(x . w + b + r), contracting axis `axis` of x with w [K, N] (order CN); r
//                a residual the optimizer fuses (fuse_residual); Keras Dense (also under
//                TimeDistributed), ONNX Gemm / MatMul and the projections of attention layers.
//   BatchMatMul  per item of axis `batch`, x's axis x_axis contracted with y's axis y_axis; the
//                result's axes (batch, x's other axes in the order of attribute x_free, then y's in
//                the order of y_free) are named by out_order.
// Their typed attributes, read once here and shared by inference, kernel builders and emitters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graft/ir/graph.hpp"

namespace graft::ops {

/// The sizes of B matrix products y [M, N] = x [M, K] . w [K, N].
struct MatMulDims {
    std::int64_t batch = 1, m = 0, k = 0, n = 0;
};

struct LinearAttrs {
    Axis axis;               ///< x's contracted axis
    std::string activation;  ///< the fused epilogue ("linear" when the op has none)

    static LinearAttrs parse(const Operator& op);
    /// M: every position of x but the contracted axis; K: w's rows; N: the units.
    MatMulDims dims(const Operator& op) const;
};

struct BatchMatMulAttrs {
    Axis batch, x_axis, y_axis;
    std::vector<Axis> x_rest, y_rest;  ///< the other axes of x and of y, in the result's order

    /// Reads the attributes and checks them against the inputs (ShapeError).
    static BatchMatMulAttrs parse(const Operator& op);
    /// B: the batch axis; M: x's other positions; K: the contracted axis; N: y's other positions.
    MatMulDims dims(const Operator& op) const;
};

}  // namespace graft::ops
