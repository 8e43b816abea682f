// The package links and its registry holds the built-in Keras converters.
#include <cstdio>

#include <graft/graft.hpp>

int main() {
    auto registry = graft::make_builtin_registry();
    const bool ok = registry->find_converter("keras", "Dense") != nullptr;
    std::printf("graft %s (plugin ABI %u): keras Dense converter %s\n", graft::version_string(),
                GRAFT_PLUGIN_ABI_VERSION, ok ? "found" : "MISSING");
    return ok ? 0 : 1;
}
