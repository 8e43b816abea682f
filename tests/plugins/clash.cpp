// A plugin that adds an op type, then a converter whose key is taken: by plugin bias_layer
// (keras:BiasLayer), or with CLASH_WITH_BUILTIN by graft itself (keras:Dense). The load must fail
// with a RegistryError and leave no ClashOp behind.
#include <graft/frontend/layer.hpp>
#include <graft/plugin.hpp>

namespace {

void clash(graft::Registry& r) {
    graft::OpSchema s;
    s.type = "ClashOp";
    s.inputs = {"x"};
    s.infer = graft::infer_like_x;
    r.add_op(std::move(s));
#ifdef CLASH_WITH_BUILTIN
    r.add_converter("keras", "Dense", [](graft::LayerContext&) {});
#else
    r.add_converter("keras", "BiasLayer", [](graft::LayerContext&) {});
#endif
}

}  // namespace

#ifdef CLASH_WITH_BUILTIN
GRAFT_PLUGIN("builtin_clash", "1.0.0", clash)
#else
GRAFT_PLUGIN("clash", "1.0.0", clash)
#endif
