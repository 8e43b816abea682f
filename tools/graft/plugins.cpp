// tools/graft/plugins.cpp - loading plugins for every command, and `graft plugins`: what each
// plugin registers.
#include <filesystem>
#include <type_traits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "graft/graft.hpp"

namespace graft::cli {

namespace {

/// A file loads as one plugin, a directory as every *.so in it.
void load_path(const std::string& path, Registry& registry) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) load_plugin_directory(path, registry);
    else load_plugin(path, registry);
}

template <class Table>
void list_owned(const Table& table, const std::shared_ptr<const void>& keepalive, const char* what, bool with_doc,
                std::size_t& count) {
    for (const auto& [key, entry] : table.entries()) {
        if (entry.owner.keepalive != keepalive) continue;
        ++count;
        if constexpr (std::is_same_v<typename Table::Entry, typename HandlerTable<OpSchema>::Entry>) {
            if (with_doc && !entry.handler.doc.empty()) {
                fmt::print("  {:<17} {}: {}\n", what, key, entry.handler.doc);
                continue;
            }
        }
        fmt::print("  {:<17} {}\n", what, key);
    }
}

}  // namespace

void load_plugins(const std::vector<std::string>& paths) {
    load_plugins_from_env(default_registry());
    for (const auto& p : paths) load_path(p, default_registry());
}

void list_plugins(const PluginsOptions& options) {
    // A registry of its own: the built-ins plus exactly the plugins asked for.
    auto registry = make_builtin_registry();
    load_plugins_from_env(*registry);
    for (const auto& p : options.plugins) load_path(p, *registry);
    for (const auto& p : options.paths) load_path(p, *registry);
    if (registry->plugins().empty()) {
        fmt::print("no plugins loaded (name .so files or directories, use --plugin, or set GRAFT_PLUGIN_PATH)\n");
        return;
    }
    for (const auto& p : registry->plugins()) {
        fmt::print("{} {}\n  file              {}\n  built against     graft {} (plugin ABI {})\n", p.name, p.version, p.file,
                   p.graft_version, GRAFT_PLUGIN_ABI_VERSION);
        std::size_t count = 0;
        list_owned(registry->ops(), p.keepalive, "op type", true, count);
        for (const auto& [backend, table] : registry->generators())
            list_owned(table, p.keepalive, (backend + " generator").c_str(), false, count);
        list_owned(registry->converters(), p.keepalive, "converter", false, count);
        if (count == 0) fmt::print("  (registers nothing)\n");
    }
}

}  // namespace graft::cli
