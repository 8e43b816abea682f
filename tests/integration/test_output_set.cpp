// Outputs as a set (graft/backend/output_set.hpp): a descriptor, a generated C++ set and
// `graft run --output-dir` appear whole or not at all. A failure injected in the middle of the
// writing (a file-size limit, RLIMIT_FSIZE, with SIGXFSZ ignored so the write fails with EFBIG)
// leaves the previous set exactly as it was and no temporary beside it.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "graft/backend/cpp.hpp"
#include "graft/backend/descriptor.hpp"
#include "graft/backend/output_set.hpp"
#include "graft/frontend/keras.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_output_set {

using namespace graft_test;

namespace {

/// Every entry of `dir` (names, sorted) and, for files in subdirectories, their bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        out[fs::relative(e.path(), dir).string()] = e.is_regular_file() ? read_text(e.path()) : "<dir>";
    return out;
}

/// Runs `fn` with files limited to `bytes` (a larger write fails with EFBIG instead of a signal).
template <typename Fn>
void with_file_size_limit(rlim_t bytes, Fn&& fn) {
    rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    struct sigaction ignore {}, saved{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGXFSZ, &ignore, &saved);
    rlimit lim{bytes, old.rlim_max};
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &lim) == 0);
    try {
        fn();
    } catch (...) {
        ::setrlimit(RLIMIT_FSIZE, &old);
        ::sigaction(SIGXFSZ, &saved, nullptr);
        throw;
    }
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::sigaction(SIGXFSZ, &saved, nullptr);
}

}  // namespace

TEST_CASE("output set: created, replaced whole, and a directory of other files is refused", "[output_set]") {
    TempDir tmp;
    graft::write_output_set((tmp / "set").string(), {{"a.npy", "one"}, {"b.npy", "two"}}, {".npy"}, "the outputs");
    CHECK(snapshot(tmp.path()) == std::map<std::string, std::string>{{"set", "<dir>"}, {"set/a.npy", "one"}, {"set/b.npy", "two"}});
    // A new set replaces the old one whole: b.npy of the old set does not survive beside the new c.npy.
    graft::write_output_set((tmp / "set/").string(), {{"a.npy", "1"}, {"c.npy", "3"}}, {".npy"}, "the outputs");
    CHECK(snapshot(tmp.path()) == std::map<std::string, std::string>{{"set", "<dir>"}, {"set/a.npy", "1"}, {"set/c.npy", "3"}});
    // Not a previous set: refused, untouched.
    fs::create_directories(tmp / "mine");
    std::ofstream(tmp / "mine/notes.txt") << "keep";
    CHECK_THROWS_WITH(graft::write_output_set((tmp / "mine").string(), {{"a.npy", "x"}}, {".npy"}, "the outputs"),
                      Catch::Contains("cannot write the outputs to " + (tmp / "mine").string() +
                                      ": it exists and holds notes.txt, which graft did not write there"));
    CHECK(read_text(tmp / "mine/notes.txt") == "keep");
    CHECK_THROWS_AS(graft::write_output_set((tmp / "no/parent").string(), {{"a.npy", "x"}}, {".npy"}, "x"), graft::IOError);
    graft::write_output_set((tmp / "made/parent").string(), {{"a.npy", "x"}}, {".npy"}, "x", true);
    CHECK(read_text(tmp / "made/parent/a.npy") == "x");
    CHECK_THROWS_AS(graft::write_output_set((tmp / "set").string(), {{"../a.npy", "x"}}, {".npy"}, "x"), graft::IOError);
}

TEST_CASE("output set: a write failing midway leaves the old set intact and no temporary", "[output_set]") {
    TempDir tmp;
    graft::write_output_set((tmp / "set").string(), {{"a.npy", "old a"}, {"b.npy", "old b"}}, {".npy"}, "the outputs");
    const auto before = snapshot(tmp.path());
    with_file_size_limit(4096, [&] {
        // a.npy fits, b.npy does not: the failure comes after part of the new set is written.
        CHECK_THROWS_WITH(graft::write_output_set((tmp / "set").string(), {{"a.npy", "new a"}, {"b.npy", std::string(100000, 'b')}},
                                                  {".npy"}, "the outputs"),
                          Catch::Contains("cannot write") && Catch::Contains("b.npy: File too large"));
        CHECK_THROWS_AS(graft::write_file_atomically((tmp / "single.npy").string(), std::string(100000, 's')), graft::IOError);
    });
    CHECK(snapshot(tmp.path()) == before);
}

TEST_CASE("output set: graft convert (descriptor, C++) and run --output-dir keep the old set when a write fails", "[output_set][cli]") {
    const auto model = fixture("functional_shared_layer") / "model.h5";
    TempDir tmp;
    auto reg = graft::make_builtin_registry();
    graft::descriptor::write(graft::keras::convert(model.string(), *reg), *reg, (tmp / "desc").string());
    graft::cpp::generate(graft::keras::convert(model.string(), *reg), *reg, graft::cpp::Options{}, (tmp / "cpp").string());
    const auto before = snapshot(tmp.path());
    with_file_size_limit(512, [&] {
        CHECK_THROWS_AS(graft::descriptor::write(graft::keras::convert(model.string(), *reg), *reg, (tmp / "desc").string()),
                        graft::IOError);
        CHECK_THROWS_AS(graft::cpp::generate(graft::keras::convert(model.string(), *reg), *reg, graft::cpp::Options{},
                                             (tmp / "cpp").string()),
                        graft::IOError);
    });
    CHECK(snapshot(tmp.path()) == before);

    // The CLI under a file-size limit (ulimit -f counts 512-byte blocks; SIGXFSZ ignored).
    const auto dir = fixture("functional_shared_layer");
    const std::vector<std::string> run{"run", model.string(), "--input", "input_a=" + (dir / "input_input_a.npy").string(),
                                       "--input", "input_b=" + (dir / "input_input_b.npy").string(), "--output-dir",
                                       (tmp / "out").string()};
    REQUIRE(run_cli(run).exit_code == 0);
    const auto outputs = snapshot(tmp.path());
    std::string cmd = "trap '' XFSZ; ulimit -f 0; exec " + shell_quote(GRAFT_CLI);
    for (const auto& a : run) cmd += " " + shell_quote(a);
    cmd += " 2>/dev/null";  // (a regular file would be limited too)
    const int status = std::system(("sh -c " + shell_quote(cmd)).c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    CHECK(snapshot(tmp.path()) == outputs);
}

}  // namespace graft_test_output_set
