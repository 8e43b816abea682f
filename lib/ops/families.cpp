// The one list of graft's op families (lib/ops/<family>/): each call registers a family's op
// schemas with their kernel builders and emitters. Families still in the old layout register their
// schemas and their emitters separately (ops/<x>.cpp, backend/cpp/emit_<x>.cpp) until they move.
#include "ops/families.hpp"

#include "ops/legacy_families.hpp"

namespace graft::ops {

void register_builtin_ops(Registry& r) {
    register_linear(r);
    register_conv(r);
    register_pool(r);
    register_elementwise(r);
    register_normalization(r);
    register_shape(r);
    register_recurrent(r);
    register_reverse(r);
    register_layer_norm(r);
    register_embedding(r);
    register_attention(r);
    register_conv3d(r);
    register_pad(r);
    register_resize(r);
    register_fused_elementwise(r);
    cpp::register_pool_emitters(r);
    cpp::register_elementwise_emitters(r);
    cpp::register_shape_emitters(r);
    cpp::register_norm_emitters(r);
    cpp::register_embedding_emitters(r);
    cpp::register_sequence_emitters(r);
    cpp::register_fused_emitters(r);
}

}  // namespace graft::ops
