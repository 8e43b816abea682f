// graft/plugin_loader.hpp - the host side of plugins: loading shared objects into a Registry.
//
// Defined in libgraft; a plugin never calls these (it includes graft/plugin.hpp).
#pragma once

#include <string>
#include <vector>

#include "graft/export.hpp"
#include "graft/plugin.hpp"
#include "graft/registry.hpp"

namespace graft {

/// Loads the plugin at `path` into `registry` and returns what was loaded.
///
/// Loading a plugin whose name and version are already loaded into this registry does nothing
/// and returns the earlier record (so --plugin and GRAFT_PLUGIN_PATH may name the same file).
/// Errors, each naming the file:
///  - PluginError: no such file, not a loadable shared object (with the loader's reason), no
///    entry point, a wrong magic number or ABI version (found and expected), an incomplete
///    info block, the same plugin name at another version, an exception thrown by registration;
///  - RegistryError: registration added a key (op type, converter, generator) that is taken,
///    naming who holds it.
/// After an error the registry is as before. Not thread-safe with other uses of `registry`:
/// load plugins before converting or running models with it.
GRAFT_API PluginRecord load_plugin(const std::string& path, Registry& registry);

/// Registers a plugin compiled into the program rather than loaded from a shared object (the
/// browser runtime, where there is no dlopen, or a host that links its plugins statically).
/// `entry` is the plugin's GRAFT_PLUGIN entry point; compile the plugin's sources with
/// `-DGRAFT_PLUGIN_STATIC_ENTRY=NAME` (a name of its own) so that several can be linked into one
/// program, and pass that function. The same checks and errors as load_plugin, naming
/// "static plugin 'NAME'"; its record's file is "static".
GRAFT_API PluginRecord register_static_plugin(graft_plugin_entry_fn entry, Registry& registry);

/// Loads every `*.so` file in directory `dir` (sorted by name). PluginError if `dir` is not a
/// directory.
GRAFT_API std::vector<PluginRecord> load_plugin_directory(const std::string& dir, Registry& registry);

/// Loads the plugins of the GRAFT_PLUGIN_PATH environment variable: a colon-separated list of
/// directories, every `*.so` file in each (empty entries are ignored; an entry that is not a
/// directory is a PluginError naming it). graft never reads the variable on its own (a library
/// should not load code because of its host's environment): hosts call this, and the graft
/// tool does before every command.
GRAFT_API std::vector<PluginRecord> load_plugins_from_env(Registry& registry);

}  // namespace graft
