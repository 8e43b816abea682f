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
#include "plugin/register.hpp"

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
    return plugin::register_info(entry(), registry, path, absolute.lexically_normal().string(),
                                 std::shared_ptr<const void>(library, library.get()));
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
