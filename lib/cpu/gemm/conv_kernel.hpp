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

namespace graft::cpu::gemm {

using native::BuildContext;
using native::Kernel;
using native::RunContext;
using native::Slot;

/// `w`: the constant kernel (HWIO); its transformed or packed form is shared by the programs of a
/// model (BuildContext::keep_shared).
std::unique_ptr<Kernel> make_conv2d_kernel(BuildContext& b, const Conv2DParams& p, const ConstantVariable& w,
                                           Slot x, std::optional<Slot> bias, std::optional<Slot> residual, Slot y,
                                           const ActParams& act);

}  // namespace graft::cpu::gemm
