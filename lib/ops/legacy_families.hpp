// Registration functions of the op families not yet in lib/ops/<family>/ (each goes when its
// family moves).
#pragma once

#include "graft/registry.hpp"

namespace graft::cpp {
void register_pool_emitters(Registry& r);
void register_elementwise_emitters(Registry& r);
void register_shape_emitters(Registry& r);
void register_norm_emitters(Registry& r);
void register_embedding_emitters(Registry& r);
void register_sequence_emitters(Registry& r);
void register_fused_emitters(Registry& r);
}  // namespace graft::cpp

namespace graft::ops {
void register_pool(Registry& r);
void register_elementwise(Registry& r);
void register_normalization(Registry& r);
void register_shape(Registry& r);
void register_recurrent(Registry& r);
void register_reverse(Registry& r);
void register_layer_norm(Registry& r);
void register_embedding(Registry& r);
void register_attention(Registry& r);
void register_conv3d(Registry& r);
void register_pad(Registry& r);
void register_resize(Registry& r);
void register_fused_elementwise(Registry& r);
}  // namespace graft::ops
