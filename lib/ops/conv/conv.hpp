// The convolution family, Keras kernel layouts and TF padding rules:
//   Conv1D           x NTC,   w TCN   [k, c_in, c_out]                padding valid | same | explicit | causal
//   Conv2D           x NHWC,  w HWCN  [kh, kw, c_in, c_out]           padding valid | same | explicit
//   Conv3D           x NDHWC, w DHWCN [kd, kh, kw, c_in, c_out]       padding valid | same | explicit
//   DepthwiseConv2D  x NHWC,  w HWC[M] [kh, kw, c_in, multiplier], output channel c * M + m
//   ConvTranspose2D  x NHWC,  w HWNC  [kh, kw, c_out, c_in]           (Keras Conv1D/2DTranspose)
//   ConvTranspose3D  x NDHWC, w DHWNC [kd, kh, kw, c_out, c_in]
// Attributes strides, dilations (one per spatial axis), padding, an optional fused activation,
// with padding 'explicit' (not for the transposed ones) pads [begin per spatial axis, then end]
// (ONNX's pads; optimize::fold_pad writes them), for the transposed ones output_padding (optional: none means Keras' default output size).
// Conv1D and Conv2D take an optional residual input r (y's shape) added before the activation
// (optimize::fuse_residual). ConvAttrs reads the attributes once and gives the geometry that
// inference, the kernel builders and the emitters share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft_rt/conv.hpp"
#include "graft_rt/conv_transpose.hpp"
#include "graft_rt/depthwise.hpp"

namespace graft::ops {

struct ConvAttrs {
    enum class Kind { conv, depthwise, transpose };
    Kind kind = Kind::conv;
    int rank = 2;                                  ///< spatial axes: 1 (Conv1D), 2 or 3
    std::vector<std::int64_t> strides, dilations;  ///< one per spatial axis
    std::vector<std::int64_t> output_padding;      ///< transposed: one per spatial axis, -1: Keras' default
    std::string padding;                           ///< valid | same | explicit | causal (Conv1D only)
    std::vector<std::int64_t> pads;                ///< explicit: begin per spatial axis, then end
    std::string activation = "linear";             ///< the fused epilogue

    /// What the op type says (kind and rank), no attributes; UnsupportedError for a type that is
    /// not a convolution.
    static ConvAttrs of_type(const std::string& type);
    /// The op's attributes, checked for its type (ShapeError).
    static ConvAttrs parse(const Operator& op);

    /// The orders of x (and y, r) and of w.
    const Order& x_order() const;
    const Order& w_order() const;

    /// The geometry of the op's x and w, checked against each other and the bias (ShapeError),
    /// over NDHWC: 1-D and 2-D have unit leading spatial sizes (d = kd = od = 1 and, 1-D, h = kh =
    /// oh = 1); depthwise: cout = cin * multiplier; transposed: the pads are in the output.
    graft_rt::Conv3DParams geometry(const Operator& op) const;
    /// y's shape (in x_order()) for a geometry.
    Shape output_shape(const graft_rt::Conv3DParams& g) const;

    // ---- the geometry as the 2-D kernels take it (the others take geometry()) -----------------
    graft_rt::Conv2DParams conv2d(const Operator& op) const;        ///< Conv1D, Conv2D
    graft_rt::DepthwiseParams depthwise(const Operator& op) const;  ///< DepthwiseConv2D
};

}  // namespace graft::ops
