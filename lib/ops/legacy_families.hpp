// Registration functions of the op families not yet in lib/ops/<family>/ (each goes when its
// family moves).
#pragma once

#include "graft/registry.hpp"

namespace graft::cpp {
void register_linear_emitters(Registry& r);
void register_conv_emitters(Registry& r);
void register_pool_emitters(Registry& r);
void register_elementwise_emitters(Registry& r);
void register_shape_emitters(Registry& r);
void register_norm_emitters(Registry& r);
void register_fused_emitters(Registry& r);
}  // namespace graft::cpp

namespace graft::ops {
void register_linear(Registry& r);
void register_conv(Registry& r);
void register_pool(Registry& r);
void register_elementwise(Registry& r);
void register_batch_norm(Registry& r);
void register_shape(Registry& r);
void register_reverse(Registry& r);
void register_layer_norm(Registry& r);
void register_batch_matmul(Registry& r);
void register_conv3d(Registry& r);
void register_conv_transpose(Registry& r);
void register_depthwise(Registry& r);
void register_pad(Registry& r);
void register_resize(Registry& r);
void register_fused_elementwise(Registry& r);
}  // namespace graft::ops
