// The resize family: Upsample (nearest neighbour by integer factors along named axes, any layout)
// and ResizeBilinear (NHWC images, integer factors; TF 1 legacy or TF 2 half-pixel sampling).
// Their typed attributes (the names are in ops/op_types.hpp), read once and shared by the
// schemas, the native kernel builders and the C++ emitters (resize.cpp); the kernels are
// graft_rt's (graft_rt/resize.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "graft/ir/operator.hpp"

namespace graft::ops {

/// Upsample: every entry repeated factors[i] times along axes[i].
struct UpsampleAttrs {
    Order axes;
    std::vector<std::int64_t> factors;
    static UpsampleAttrs parse(const Operator& op);
    /// The factor of every axis of x in its memory order (1 for the others). ShapeError for an
    /// axis x lacks, N or a factor below 1; UnsupportedError beyond graft_rt::max_rank axes.
    std::vector<std::int64_t> factors_of(const Operator& op) const;
};

/// ResizeBilinear: x NHWC resized by factors[2] (H, W); half_pixel sampling (TF 2) or not (TF 1).
struct ResizeBilinearAttrs {
    std::int64_t factor_h = 1, factor_w = 1;
    bool half_pixel = false;
    static ResizeBilinearAttrs parse(const Operator& op);
    /// x [n, h, w, c] resized to [n, oh, ow, c].
    struct Geometry {
        std::int64_t n, h, w, c, oh, ow;
    };
    Geometry geometry(const Operator& op) const;
};

}  // namespace graft::ops
