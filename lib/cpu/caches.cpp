#include "cpu/caches.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace graft::cpu {

std::size_t cache_bytes(int level) {
#if defined(__linux__) && !defined(__EMSCRIPTEN__)  // the browser runtime has no /sys (nor a file system)
    for (int idx = 0; idx < 8; ++idx) {
        const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(idx) + "/";
        std::ifstream lv(dir + "level"), sz(dir + "size"), ty(dir + "type");
        int l = 0;
        std::string size, type;
        if (!(lv >> l) || !(sz >> size) || l != level || ((ty >> type) && type == "Instruction")) continue;
        const long k = std::atol(size.c_str());
        if (k <= 0) continue;
        const char unit = size.back();
        return static_cast<std::size_t>(k) * (unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1);
    }
#endif
#if defined(_SC_LEVEL2_CACHE_SIZE) && !defined(__EMSCRIPTEN__) && defined(_SC_LEVEL3_CACHE_SIZE) && \
    defined(_SC_LEVEL1_DCACHE_SIZE)
    const long v = sysconf(level == 1   ? _SC_LEVEL1_DCACHE_SIZE
                           : level == 2 ? _SC_LEVEL2_CACHE_SIZE
                                        : _SC_LEVEL3_CACHE_SIZE);
    if (v > 0) return static_cast<std::size_t>(v);
#endif
    return level == 1 ? std::size_t{32} << 10 : level == 2 ? std::size_t{1} << 20 : std::size_t{32} << 20;
}

}  // namespace graft::cpu
