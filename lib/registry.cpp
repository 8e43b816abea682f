// The built-in registry: every op family and every Keras converter graft ships.
#include "frontend/keras/layers/layers.hpp"
#include "graft/backend/cpp.hpp"
#include "graft/graft.hpp"
#include "ops/op_util.hpp"

namespace graft {

std::unique_ptr<Registry> make_builtin_registry() {
    auto r = std::make_unique<Registry>();
    ops::register_linear(*r);
    ops::register_conv(*r);
    ops::register_pool(*r);
    ops::register_elementwise(*r);
    ops::register_normalization(*r);
    ops::register_shape(*r);
    ops::register_recurrent(*r);
    ops::register_reverse(*r);
    ops::register_layer_norm(*r);
    ops::register_embedding(*r);
    ops::register_attention(*r);
    ops::register_conv3d(*r);
    ops::register_conv_transpose(*r);
    ops::register_depthwise(*r);
    ops::register_pad(*r);
    ops::register_resize(*r);
    ops::register_fused_elementwise(*r);
    keras::register_core(*r);
    keras::register_conv(*r);
    keras::register_pooling(*r);
    keras::register_normalization(*r);
    keras::register_merge(*r);
    keras::register_activations(*r);
    keras::register_recurrent(*r);
    keras::register_wrappers(*r);
    keras::register_embedding(*r);
    keras::register_attention(*r);
    keras::register_reshaping(*r);
    cpp::register_builtin_emitters(*r);
    return r;
}

Registry& default_registry() {
    static std::unique_ptr<Registry> r = make_builtin_registry();
    return *r;
}

}  // namespace graft
