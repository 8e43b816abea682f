// Hostile plugin files (issue 17): a truncated copy of a real plugin (made here from the built
// bias_layer plugin) must be refused from its ELF headers before dlopen, and a shared object that
// exports graft_plugin_entry as data (tests/plugins/entry_data.cpp) before the "entry" is called.
// Each a PluginError naming the file, never a crash.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_plugin_files {

using namespace graft_test;

TEST_CASE("hostile plugins: a truncated plugin and a data entry symbol give PluginErrors", "[errors][hostile][plugin]") {
    const std::string real = (fs::path(GRAFT_PLUGIN_DIR) / "libgraft_bias_layer.so").string();
    REQUIRE(fs::is_regular_file(real));
    std::ifstream in(real, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    TempDir tmp;
    for (std::size_t keep : {std::size_t{10}, std::size_t{64}, std::size_t{1000}, bytes.size() / 2, bytes.size() - 1}) {
        DYNAMIC_SECTION("truncated to " << keep << " bytes") {
            const auto cut = (tmp / ("libcut_" + std::to_string(keep) + ".so")).string();
            std::ofstream(cut, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(keep));
            auto reg = graft::make_builtin_registry();
            REQUIRE_THROWS_AS(graft::load_plugin(cut, *reg), graft::PluginError);
            REQUIRE_THROWS_WITH(graft::load_plugin(cut, *reg), Catch::Contains(cut));
        }
    }
    SECTION("graft_plugin_entry exported as data") {
        const std::string data = (fs::path(GRAFT_TEST_PLUGIN_DIR) / "libtest_entry_data.so").string();
        auto reg = graft::make_builtin_registry();
        REQUIRE_THROWS_AS(graft::load_plugin(data, *reg), graft::PluginError);
        REQUIRE_THROWS_WITH(graft::load_plugin(data, *reg), Catch::Contains("is not a function"));
        check_cli_error(run_cli({"plugins", data}), {data, "not a function"});
    }
    SECTION("the real plugin still loads") {
        auto reg = graft::make_builtin_registry();
        REQUIRE_NOTHROW(graft::load_plugin(real, *reg));
    }
}

}  // namespace graft_test_plugin_files
