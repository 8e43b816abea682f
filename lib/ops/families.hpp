// The op families graft ships: every one registers its schemas and its generators (kernel
// builders for the native backend, emitters for the cpp backend) in one call. This file is the
// one list of them (lib/ops/families.cpp).
#pragma once

#include "graft/registry.hpp"

namespace graft::ops {

/// Registers every built-in op family into `r`.
void register_builtin_ops(Registry& r);

void register_linear(Registry& r);  // lib/ops/linear: Linear, BatchMatMul
void register_conv(Registry& r);    // lib/ops/conv: Conv1D/2D/3D, DepthwiseConv2D, ConvTranspose2D/3D

}  // namespace graft::ops
