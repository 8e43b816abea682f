// Registration functions of the op families not yet in lib/ops/<family>/ (each goes when its
// family moves).
#pragma once

#include "graft/registry.hpp"

namespace graft::cpp {
void register_linear_emitters(Registry& r);
void register_conv_emitters(Registry& r);
}  // namespace graft::cpp

namespace graft::ops {
void register_linear(Registry& r);
void register_conv(Registry& r);
void register_batch_matmul(Registry& r);
void register_conv3d(Registry& r);
void register_conv_transpose(Registry& r);
void register_depthwise(Registry& r);
}  // namespace graft::ops
