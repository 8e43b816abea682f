// A plugin built for another ABI version (with BAD_MAGIC: not answering like a graft plugin at all;
// with BAD_LAYOUT: the right ABI version but headers of another layout). Its registration must
// never run: it would abort the test.
#include <cstdlib>

#include <graft/plugin.hpp>

namespace {
void must_not_run(graft::Registry&) { std::abort(); }
}  // namespace

extern "C" GRAFT_PLUGIN_EXPORT const graft_plugin_info* GRAFT_PLUGIN_ENTRY_FUNCTION(void) {
    constexpr auto layout = graft::detail::plugin_layout_fingerprint();
#if defined(BAD_MAGIC)
    static const graft_plugin_info info = {0x12345678u, GRAFT_PLUGIN_ABI_VERSION, GRAFT_VERSION_STRING, "bad_magic", "1", &must_not_run, layout};
#elif defined(BAD_LAYOUT)
    static const graft_plugin_info info = {GRAFT_PLUGIN_MAGIC, GRAFT_PLUGIN_ABI_VERSION, GRAFT_VERSION_STRING, "bad_layout", "1",
                                           &must_not_run, layout + 1};
#else
    static const graft_plugin_info info = {GRAFT_PLUGIN_MAGIC, GRAFT_PLUGIN_ABI_VERSION + 1, GRAFT_VERSION_STRING, "abi_mismatch", "1",
                                           &must_not_run, layout};
#endif
    return &info;
}
