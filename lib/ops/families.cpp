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
    register_activation(r);
    register_elementwise(r);
    register_affine(r);
    register_normalization(r);
    register_shape(r);
    register_recurrent(r);
    register_embedding(r);
    register_attention(r);
    register_batch_matmul(r);
    register_conv3d(r);
    register_conv_transpose(r);
    register_depthwise(r);
    register_resize(r);
    register_fused(r);
    cpp::register_linear_emitters(r);
    cpp::register_conv_emitters(r);
}

}  // namespace graft::ops
