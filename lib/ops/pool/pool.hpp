// The pooling family: Pool2D (max / average windows over NHWC), Pool3D (the same over NDHWC) and
// GlobalPool (max / mean over named axes). Its typed attributes (the names are in
// ops/op_types.hpp), read once and shared by the schemas, the native kernel builders and the C++
// emitters (pool.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graft/ir/operator.hpp"
#include "graft_rt/pool.hpp"

namespace graft::ops {

/// Pool2D / Pool3D: attrs kind (max | avg), pool_size[nd], strides[nd], padding (valid | same |
/// explicit with pads[2 nd] and ceil_mode).
struct PoolAttrs {
    int nd = 2;  ///< spatial axes: 2 (x NHWC) or 3 (x NDHWC)
    bool max = true;
    std::vector<std::int64_t> pool_size, strides;
    std::string padding;  ///< valid | same (TF rules) | explicit (pads, ceil_mode)
    /// padding explicit: begin pads then end pads, one per spatial axis; ceil_mode rounds the
    /// output size up (ONNX / PyTorch pooling).
    std::vector<std::int64_t> pads;
    bool ceil_mode = false;
    /// Distance between a window's taps per spatial axis (attr dilations; all 1 when absent).
    std::vector<std::int64_t> dilations;
    /// PoolArgMax: indices in N, C, W, H, D order (ONNX storage_order 1).
    bool column_major = false;

    /// Reads and checks the attributes (UnsupportedError for an unknown kind, ShapeError else).
    static PoolAttrs parse(const Operator& op);
    /// The windows over the op's input x (TF / Keras padding rules; 2-D: d = kd = od = 1).
    graft_rt::PoolParams geometry(const Operator& op) const;
};

/// GlobalPool: attrs kind (max | avg) and axes (the reduced axes, never N).
struct GlobalPoolAttrs {
    bool max = true;
    Order axes;

    static GlobalPoolAttrs parse(const Operator& op);
    /// The order x must have: [N, axes..., the other axes...], a reduction of its middle block.
    Order input_order(const Operator& op) const;
    /// x (in that order) as [outer, mid, inner]: batch, reduced, kept.
    struct Reduce {
        std::int64_t outer, mid, inner;
    };
    Reduce geometry(const Operator& op) const;
};

}  // namespace graft::ops
