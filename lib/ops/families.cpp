// The one list of graft's op families (lib/ops/<family>/): each call registers a family's op
// schemas with their kernel builders and emitters.
#include "ops/families.hpp"

namespace graft::ops {

void register_builtin_ops(Registry& r) {
    register_linear(r);
    register_conv(r);
    register_local_conv(r);
    register_pool(r);
    register_activation(r);
    register_elementwise(r);
    register_affine(r);
    register_normalization(r);
    register_shape(r);
    register_recurrent(r);
    register_conv_lstm(r);
    register_embedding(r);
    register_attention(r);
    register_resize(r);
    register_grid_sample(r);
    register_fused(r);
    register_broadcast(r);
    register_reduce(r);
    register_along_axis(r);
    register_integer(r);
}

}  // namespace graft::ops
