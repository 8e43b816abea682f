// The native kernel for a 2-D convolution with constant weights: weights prepacked at compile
// time, then Winograd F(4x4,3x3) (F(2x2,3x3) on small images) for 3x3 stride-1 convolutions
// where it pays (winograd.hpp; GRAFT_WINOGRAD=0 disables it), else the
// implicit GEMM over NHWC (no im2col buffer). `residual` (same shape as y) is added before the
// activation.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "cpu/kernels.hpp"
#include "graft/backend/native_kernel.hpp"
#include "graft/precision.hpp"

namespace graft::cpu::gemm {

using native::BuildContext;
using native::Kernel;
using native::RunContext;
using native::Slot;

/// The precision a 2-D convolution runs in when the model asks for `requested`: int8 wherever a
/// patch has 32 taps or more (kh * kw * cin; up to kQMaxK), bf16 likewise where Winograd does
/// not run; fp32 otherwise. make_conv2d_kernel and the fused inverted-residual block both ask.
Precision conv_precision(Precision requested, const Conv2DParams& p);

/// `w`: the constant kernel (HWIO); its transformed or packed form is shared by the programs of a
/// model (BuildContext::keep_shared).
std::unique_ptr<Kernel> make_conv2d_kernel(BuildContext& b, const Conv2DParams& p, const ConstantVariable& w,
                                           Slot x, std::optional<Slot> bias, std::optional<Slot> residual, Slot y,
                                           const ActParams& act);

}  // namespace graft::cpu::gemm
