// The plugin loader: a shared object through Boost.DLL (its ELF headers checked before the
// dynamic loader sees it, its entry symbol's type before it is called), its info block checked before anything
// else, its registration run as the owner of what it adds (and undone if it fails).
#define BOOST_DLL_USE_STD_FS 1  // std::filesystem: no boost_filesystem to link
#include <boost/dll/shared_library.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "graft/plugin.hpp"
#include "graft/plugin_loader.hpp"
#include "plugin/elf_check.hpp"

namespace graft {

namespace {

namespace fs = std::filesystem;

/// Why the dynamic loader refuses `path`. Boost.DLL reports only "bad file descriptor" and
/// clears dlerror(), so ask the loader once more for its own words.
std::string loader_reason(const fs::path& path, const std::string& fallback) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return "cannot open the file";
    char magic[4] = {};
    in.read(magic, 4);
    if (in.gcount() < 4) return "the file is too short to be a shared object";
    if (std::memcmp(magic, "\x7f" "ELF", 4) != 0) return "not an ELF file";
    dlerror();
    if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {  // loads now: say no more
        dlclose(h);
        return fallback;
    }
    const char* e = dlerror();
    return e ? std::string(e) : fallback;
}

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

std::vector<fs::path> shared_objects_in(const fs::path& dir) {
    std::error_code ec;
    std::vector<fs::path> out;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".so" && it->is_regular_file()) out.push_back(it->path());
    if (ec) throw PluginError(dir.string() + ": cannot list plugin directory: " + ec.message());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

PluginRecord load_plugin(const std::string& path, Registry& registry) {
    std::error_code ec;
    const fs::path file(path);
    if (!fs::exists(file, ec)) throw PluginError(path + ": cannot load plugin: no such file");
    if (fs::is_directory(file, ec))
        throw PluginError(path + ": cannot load plugin: it is a directory (give a .so file, or list the directory in GRAFT_PLUGIN_PATH)");
    const fs::path absolute = fs::absolute(file, ec);

    // The library handle lives in a shared_ptr that every handler's owner shares. It is declared
    // before everything that may hold plugin code (exceptions, handlers), so it goes last.
    auto library = std::make_shared<boost::dll::shared_library>();
    plugin::check_elf_file(absolute.string(), path);  // a truncated file would crash inside dlopen
    try {
        library->load(absolute, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
        throw PluginError(path + ": cannot load plugin: not a loadable shared object (" + loader_reason(absolute, e.what()) + ")");
    }

    if (!library->has(GRAFT_PLUGIN_ENTRY_NAME))
        throw PluginError(path + ": not a graft plugin: it exports no entry point '" GRAFT_PLUGIN_ENTRY_NAME
                          "' (define one with GRAFT_PLUGIN(...) from graft/plugin.hpp)");
    // A data symbol of that name would be "called" into garbage: check its type and segment first.
    plugin::check_entry_symbol(dlsym(library->native(), GRAFT_PLUGIN_ENTRY_NAME), GRAFT_PLUGIN_ENTRY_NAME, path);
    auto entry = library->get<const graft_plugin_info*()>(GRAFT_PLUGIN_ENTRY_NAME);
    const graft_plugin_info* info = entry();
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
    record.file = absolute.lexically_normal().string();
    if (!info->register_fn) throw PluginError(path + ": plugin '" + record.name + "' has no registration function");

    if (const PluginRecord* loaded = registry.find_plugin(record.name)) {
        if (loaded->version == record.version) return *loaded;  // loaded already: nothing to do
        throw PluginError(path + ": plugin '" + record.name + "' version " + record.version + " cannot be loaded: version " +
                          loaded->version + " of it is already loaded from " + loaded->file);
    }

    record.keepalive = std::shared_ptr<const void>(library, library.get());
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

std::vector<PluginRecord> load_plugin_directory(const std::string& dir, Registry& registry) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw PluginError(dir + ": not a plugin directory (no such directory)");
    std::vector<PluginRecord> out;
    for (const auto& so : shared_objects_in(dir)) out.push_back(load_plugin(so.string(), registry));
    return out;
}

std::vector<PluginRecord> load_plugins_from_env(Registry& registry) {
    std::vector<PluginRecord> out;
    const char* env = std::getenv("GRAFT_PLUGIN_PATH");
    if (!env) return out;
    const std::string list(env);
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t end = list.find(':', start);
        if (end == std::string::npos) end = list.size();
        const std::string dir = list.substr(start, end - start);
        start = end + 1;
        if (dir.empty()) continue;
        std::error_code ec;
        if (!fs::is_directory(dir, ec))
            throw PluginError("GRAFT_PLUGIN_PATH: '" + dir + "' is not a directory (the variable lists directories of plugins, separated by ':')");
        for (auto& r : load_plugin_directory(dir, registry)) out.push_back(std::move(r));
    }
    return out;
}

}  // namespace graft
