// Registering a plugin's info block into a Registry: checked field by field before anything is
// called, registration run as the owner of what it adds (and undone if it fails). Shared by the
// shared-object loader (plugin.cpp) and plugins compiled into the program (the browser runtime).
#include "plugin/register.hpp"

#include <string>
#include <utility>

#include "graft/plugin_loader.hpp"

namespace graft {

namespace {

/// A C string from the info block, checked (non-null, printable, bounded).
std::string info_string(const char* s, const char* field, const std::string& path, bool allow_empty) {
    if (!s) throw PluginError(path + ": the plugin's info block has no " + field);
    std::size_t n = 0;
    while (n < 256 && s[n]) {
        const auto c = static_cast<unsigned char>(s[n]);
        if (c < 0x20 || c == 0x7f) throw PluginError(path + ": the plugin's " + field + " holds a control character");
        ++n;
    }
    if (n == 256) throw PluginError(path + ": the plugin's " + field + " is longer than 255 characters");
    if (n == 0 && !allow_empty) throw PluginError(path + ": the plugin's " + field + " is empty");
    return std::string(s, n);
}

std::string hex(std::uint32_t v) {
    static const char digits[] = "0123456789abcdef";
    std::string s = "0x";
    for (int shift = 28; shift >= 0; shift -= 4) s += digits[(v >> shift) & 0xf];
    return s;
}

}  // namespace

namespace plugin {

PluginRecord register_info(const graft_plugin_info* info, Registry& registry, const std::string& path, std::string file,
                           std::shared_ptr<const void> keepalive) {
    if (!info) throw PluginError(path + ": the plugin's entry point '" GRAFT_PLUGIN_ENTRY_NAME "' returned no info block");
    // Only the first two fields are read before the version is known to match.
    if (info->magic != GRAFT_PLUGIN_MAGIC)
        throw PluginError(path + ": the plugin's info block starts with " + hex(info->magic) + ", expected " +
                          hex(GRAFT_PLUGIN_MAGIC) + " (not a graft plugin, or a corrupt one)");
    if (info->abi_version != GRAFT_PLUGIN_ABI_VERSION)
        throw PluginError(path + ": plugin ABI version mismatch: the plugin has ABI version " + std::to_string(info->abi_version) +
                          ", this graft (" GRAFT_VERSION_STRING ") expects " + std::to_string(GRAFT_PLUGIN_ABI_VERSION) +
                          "; rebuild the plugin against this graft's headers");

    if (info->layout != detail::plugin_layout_fingerprint())
        throw PluginError(path + ": the plugin was built against graft headers whose types have another layout (ABI " +
                          std::to_string(GRAFT_PLUGIN_ABI_VERSION) + " both, but the layout fingerprints differ: " +
                          std::to_string(info->layout) + " vs " + std::to_string(detail::plugin_layout_fingerprint()) +
                          "); rebuild the plugin against this graft's headers");

    PluginRecord record;
    record.name = info_string(info->name, "name", path, false);
    record.version = info_string(info->version, "version", path, true);
    record.graft_version = info_string(info->graft_version, "graft version", path, true);
    record.file = std::move(file);
    if (!info->register_fn) throw PluginError(path + ": plugin '" + record.name + "' has no registration function");

    if (const PluginRecord* loaded = registry.find_plugin(record.name)) {
        if (loaded->version == record.version) return *loaded;  // loaded already: nothing to do
        throw PluginError(path + ": plugin '" + record.name + "' version " + record.version + " cannot be loaded: version " +
                          loaded->version + " of it is already loaded from " + loaded->file);
    }

    record.keepalive = std::move(keepalive);
    const std::string who = "plugin '" + record.name + "' (" + record.file + ")";
    std::string failure;
    bool registry_error = false;
    try {
        Registry::OwnerScope scope(registry, HandlerOwner{who, record.keepalive});
        info->register_fn(registry);
    } catch (const RegistryError& e) {
        failure = e.what();
        registry_error = true;
    } catch (const std::exception& e) {
        failure = std::string("registration threw an exception: ") + e.what();
    } catch (...) {
        failure = "registration threw an exception that is not a std::exception";
    }
    // The plugin's exception object is gone here; its library is still loaded (record holds it).
    if (registry_error || !failure.empty()) {
        registry.remove_owned_by(record.keepalive);
        const std::string msg = path + ": plugin '" + record.name + "': " + failure;
        if (registry_error) throw RegistryError(msg);
        throw PluginError(msg);
    }
    registry.add_plugin(record);
    return record;
}

}  // namespace plugin

PluginRecord register_static_plugin(graft_plugin_entry_fn entry, Registry& registry) {
    if (!entry) throw PluginError("register_static_plugin: no entry point given");
    const graft_plugin_info* info = entry();
    // A static plugin has no file: its messages name it "static plugin'NAME'", its record "static". Its code lives
    // as long as the program, so nothing needs keeping alive; the owner token still marks what it
    // registered, for undoing a failed registration.
    const std::string label = std::string("static plugin '") + (info && info->name ? info->name : "?") + "'";
    return plugin::register_info(info, registry, label, "static", std::make_shared<int>(0));
}

}  // namespace graft
