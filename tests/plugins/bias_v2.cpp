// Plugin "bias_layer" at another version, registering nothing: loading it where bias_layer 1.0.0
// is loaded must be refused (two versions of one plugin in one registry).
#include <graft/plugin.hpp>

namespace {
void nothing(graft::Registry&) {}
}  // namespace

GRAFT_PLUGIN("bias_layer", "2.0.0", nothing)
