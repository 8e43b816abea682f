// The resize family: one kernel (graft_rt/resize.hpp) behind three op types, each in any memory
// order of x (y in x's order).
//   Resize          x, scales?  ONNX's: attrs axes (the resized axes), sizes (their output
//                   lengths), mode (nearest | linear | cubic), coordinate_transformation_mode
//                   (half_pixel | pytorch_half_pixel | align_corners | asymmetric |
//                   tf_half_pixel_for_nn | tf_crop_and_resize), nearest_mode (round_prefer_floor |
//                   round_prefer_ceil | floor | ceil | simple: Resize-10's floor up / ceil down),
//                   cubic_coeff_a, exclude_outside, extrapolation_value; per axis, optionally:
//                   scales (the coordinate transformation's scale, sizes = floor(scale * in);
//                   absent: sizes / in), scale_index (the scale is the entry of input `scales`,
//                   read when the model runs, instead), roi (starts then ends, tf_crop_and_resize).
//   Upsample        x  Keras' nearest upsampling: attrs axes, factors (integers >= 1).
//   ResizeBilinear  x  Keras' bilinear upsampling of H and W: attrs factors [2], half_pixel (TF 2
//                   sampling; else TF 1's corner-aligned one).
//   GridSample      x, grid  x [N, C, H, W] sampled at the points of grid [N, Ho, Wo, C=2]
//                   (grid_sample.cpp, graft_rt/grid_sample.hpp).
// The names are in ops/op_types.hpp; every resizing op type reads its attributes into a
// ResizePlan, which the schemas, the native kernel builder and the C++ emitter share (resize.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graft/ir/operator.hpp"
#include "graft_rt/resize.hpp"

namespace graft::ops {

/// What the kernel runs: its parameters and every axis of x, in x's memory order.
struct ResizePlan {
    graft_rt::ResizeParams params{};
    std::vector<graft_rt::ResizeAxis> axes;
    /// y's shape (x's memory order).
    Shape out_shape() const;
};

/// The enum value whose graft_rt name (`name`, over `count` values) is the string attribute
/// `key`; `fallback` when absent, UnsupportedError naming the op for another string.
template <class E>
E enum_attr(const Operator& op, const char* key, E fallback, const char* (*name)(E), int count) {
    if (!op.attrs().has(key)) return fallback;
    const auto s = op.attr<std::string>(key);
    for (int i = 0; i < count; ++i)
        if (s == name(static_cast<E>(i))) return static_cast<E>(i);
    throw UnsupportedError(op.describe() + ": " + key + " '" + s + "'");
}

/// The plan of a Resize, Upsample or ResizeBilinear op, checked against its input x (ShapeError
/// for attributes that do not fit it, UnsupportedError for an unknown mode, a resized batch axis,
/// a resized length of 2^24 or more, or more than graft_rt::max_rank axes).
ResizePlan resize_plan(const Operator& op);

}  // namespace graft::ops
