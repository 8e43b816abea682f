// The built-in registry: every op family (lib/ops/families.cpp) and every Keras and ONNX converter graft
// ships (the browser runtime, GRAFT_RUNTIME_ONLY, has the op families alone).
#include "backend/native/evaluator.hpp"
#include "graft/graft.hpp"
#include "ops/families.hpp"
#if !defined(GRAFT_RUNTIME_ONLY)  // the browser runtime reads descriptors only
#include "frontend/keras/layers/layers.hpp"
#include "frontend/onnx/ops/ops.hpp"
#endif

namespace graft {

std::unique_ptr<Registry> make_builtin_registry() {
    auto r = std::make_unique<Registry>();
    ops::register_builtin_ops(*r);
    r->set_evaluator(native::constant_evaluator());  // constant folding runs the native kernels
#if !defined(GRAFT_RUNTIME_ONLY)
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
    keras::register_local(*r);
    keras::register_conv_lstm(*r);
    onnx::register_converters(*r);
#endif
    return r;
}

Registry& default_registry() {
    static std::unique_ptr<Registry> r = make_builtin_registry();
    return *r;
}

}  // namespace graft
