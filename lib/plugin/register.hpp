// Internal: registering a plugin's info block (graft/plugin.hpp) into a Registry.
#pragma once

#include <memory>
#include <string>

#include "graft/plugin.hpp"

namespace graft::plugin {

/// Checks `info` (magic, ABI version, layout fingerprint, its strings) and runs its registration
/// as the owner `keepalive`; every message starts with `path`. `file` is what the record names.
/// A plugin of the same name and version already in `registry` is not registered twice.
PluginRecord register_info(const graft_plugin_info* info, Registry& registry, const std::string& path, std::string file,
                           std::shared_ptr<const void> keepalive);

}  // namespace graft::plugin
