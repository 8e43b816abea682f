// A stand-in for graft-h5-reader that misbehaves, for tests/integration/test_h5_box.cpp. Started
// as the real one is (FILE MAX_MEMORY MAX_CPU, the socket on fd 0 and 1); what it does depends on
// FILE's name: "segv" crashes, "hang" never answers, "abort" aborts, "exit7" exits with status 7,
// "garbage" sends a reply with an impossible length, "liar" answers the open and then sends a
// dataset header promising more values than the request allows.
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {
void put(const void* p, std::size_t n) {
    if (::write(1, p, n) != static_cast<ssize_t>(n)) std::_Exit(9);
}
void put_ok() {
    const std::uint8_t ok = 0;
    put(&ok, 1);
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) return 2;
    const std::string file = argv[1];
    if (file.find("segv") != std::string::npos) std::raise(SIGSEGV);
    if (file.find("abort") != std::string::npos) std::abort();
    if (file.find("exit7") != std::string::npos) return 7;
    if (file.find("hang") != std::string::npos)
        for (;;) ::pause();
    if (file.find("garbage") != std::string::npos) {
        const std::uint8_t status = 1;  // format_error, then a message of 4 GiB
        const std::uint32_t len = 0xffffffffu;
        put(&status, 1);
        put(&len, 4);
        ::pause();
    }
    if (file.find("liar") != std::string::npos) {
        put_ok();  // opened; then whatever is asked, a dataset of 2^40 values
        char buf[4096];
        if (::read(0, buf, sizeof buf) <= 0) return 0;
        put_ok();
        const std::uint32_t rank = 1;
        const std::int64_t dim = std::int64_t{1} << 40;
        const std::uint64_t count = std::uint64_t{1} << 40;
        put(&rank, 4);
        put(&dim, 8);
        put(&count, 8);
        ::pause();
    }
    return 0;
}
