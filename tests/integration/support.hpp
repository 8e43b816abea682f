// tests/integration/support.hpp - what the integration tests share: data paths and the Keras
// fixtures, temporary directories, running the graft CLI, reading .npy files, comparing tensors,
// compiling generated C++ and the registry with the sample plugins.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <xtensor/xnpy.hpp>

#include "graft/graft.hpp"
#include "graft/tensor.hpp"

namespace graft_test {

namespace fs = std::filesystem;

/// Sets an environment variable (GRAFT_WINOGRAD, GRAFT_FUSE_BLOCKS, ...) for a scope and puts the
/// old value back at its end, also when a REQUIRE throws.
class ScopedEnv {
public:
    ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
        if (const char* v = std::getenv(name_.c_str())) old_ = v, had_ = true;
        set(value);
    }
    ~ScopedEnv() {
        if (had_) ::setenv(name_.c_str(), old_.c_str(), 1);
        else ::unsetenv(name_.c_str());
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
    void set(const std::string& value) const { ::setenv(name_.c_str(), value.c_str(), 1); }

private:
    std::string name_, old_;
    bool had_ = false;
};

/// A path under the source tree, e.g. source_path("tests/fixtures/bad/truncated.h5").
inline fs::path source_path(const std::string& relative) { return fs::path(GRAFT_SOURCE_DIR) / relative; }

/// A fresh empty directory, removed with everything in it at the end of the scope.
class TempDir {
public:
    TempDir() {
        static std::atomic<unsigned> counter{0};
        path_ = fs::temp_directory_path() / fmt::format("graft_test_{}_{}", ::getpid(), counter++);
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const fs::path& path() const noexcept { return path_; }
    fs::path operator/(const std::string& name) const { return path_ / name; }

private:
    fs::path path_;
};

inline std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// ---- the Keras fixtures (tests/fixtures/keras, see its README.md) --------------------------

/// tests/fixtures/keras/<name>; the fixtures' root without a name.
inline fs::path fixture(const std::string& name = {}) {
    const fs::path root = source_path("tests/fixtures/keras");
    return name.empty() ? root : root / name;
}

/// Every fixture directory that has a manifest.json, sorted.
inline std::vector<fs::path> fixture_dirs() {
    std::vector<fs::path> dirs;
    if (fs::is_directory(fixture()))
        for (const auto& e : fs::directory_iterator(fixture()))
            if (fs::is_regular_file(e.path() / "manifest.json")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    return dirs;
}

/// A fixture's manifest.json; the test fails if it does not parse.
inline rapidjson::Document read_manifest(const fs::path& dir) {
    rapidjson::Document doc;
    doc.Parse(read_text(dir / "manifest.json").c_str());
    if (doc.HasParseError() || !doc.IsObject()) FAIL("cannot parse " << (dir / "manifest.json"));
    return doc;
}

/// The fixture the CLI tests run where any model does: a small Dense Sequential with input
/// dense_1_input and output dense_5.
struct DenseFixture {
    fs::path dir = fixture("dense_sequential_no_input_layer");
    std::string model = (dir / "model.h5").string();
    std::string input = (dir / "input_dense_1_input.npy").string();
};

struct CliResult {
    int exit_code = -1;  ///< the exit status; 128 + signal if the tool was killed by one
    std::string out, err;

    std::vector<std::string> err_lines() const {
        std::vector<std::string> lines;
        std::istringstream in(err);
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        return lines;
    }
};

inline std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

/// Runs the graft tool (GRAFT_CLI) with `args` and captures its exit code, stdout and stderr.
inline CliResult run_cli(const std::vector<std::string>& args) {
    TempDir io;
    std::string cmd = shell_quote(GRAFT_CLI);
    for (const auto& a : args) cmd += " " + shell_quote(a);
    cmd += " </dev/null >" + shell_quote((io / "out").string()) + " 2>" + shell_quote((io / "err").string());
    const int status = std::system(cmd.c_str());
    CliResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
    r.out = read_text(io / "out");
    r.err = read_text(io / "err");
    return r;
}

/// A .npy file of T as a Tensor of T's dtype.
template <class T>
graft::Tensor load_npy_as(const fs::path& p) {
    auto a = xt::load_npy<T>(p.string());
    graft::Tensor t(graft::Shape(a.shape().begin(), a.shape().end()), graft::dtype_of<T>());
    std::copy(a.begin(), a.end(), t.data<T>());
    return t;
}

/// A .npy file as a Tensor of its dtype (float32, int64, int32, uint16, uint8, int8, bool).
inline graft::Tensor load_npy(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::string head(128, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    const auto has = [&](const char* d) { return head.find(std::string("'descr': '") + d + "'") != std::string::npos; };
    if (has("<i8")) return load_npy_as<std::int64_t>(p);
    if (has("<i4")) return load_npy_as<std::int32_t>(p);
    if (has("<u2")) return load_npy_as<std::uint16_t>(p);
    if (has("|u1")) return load_npy_as<std::uint8_t>(p);
    if (has("|i1")) return load_npy_as<std::int8_t>(p);
    if (has("|b1")) return load_npy_as<bool>(p);
    return load_npy_as<float>(p);
}

/// How far `got` is from `ref`: an element is off when |got - ref| > atol + rtol * |ref| (or NaN).
struct Comparison {
    bool same_shape = false;
    double max_abs_err = 0;
    std::size_t num_off = 0;
    std::size_t first_off = 0;

    bool ok() const noexcept { return same_shape && num_off == 0; }
};

inline Comparison compare(const graft::Tensor& got, const graft::Tensor& ref, double atol, double rtol) {
    Comparison c;
    c.same_shape = got.shape() == ref.shape();
    if (!c.same_shape) return c;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double err = std::fabs(got.at_double(i) - ref.at_double(i));  // any dtypes, as values
        if (!(err <= atol + rtol * std::fabs(ref.at_double(i)))) {
            if (c.num_off++ == 0) c.first_off = i;
        }
        c.max_abs_err = std::isnan(err) || std::isnan(c.max_abs_err) ? NAN : std::fmax(c.max_abs_err, err);
    }
    return c;
}

// ---- compiling generated C++ (the cpp backend and conformance tests) ----------------------

/// The compiler the tests use: $GRAFT_TEST_CXX, else c++.
inline std::string cxx() {
    const char* e = std::getenv("GRAFT_TEST_CXX");
    return e && *e ? e : "c++";
}

inline bool have(const std::string& tool) { return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0; }

/// Runs a shell command, stdout and stderr into `log`; true on exit status 0.
inline bool sh(const std::string& cmd, const fs::path& log) {
    return std::system((cmd + " >" + shell_quote(log.string()) + " 2>&1 </dev/null").c_str()) == 0;
}

inline std::string compile_cmd(const std::string& compiler, const std::string& flags, const fs::path& src, const fs::path& out) {
    return fmt::format("{} -std=c++17 {} -Wall -Wextra -Werror -I{} {} -o {}", compiler, flags,
                       shell_quote(source_path("tests/cpp_backend").string()), shell_quote(src.string()),
                       shell_quote(out.string()));
}

inline std::string cstr(const std::string& s) {  // a C++ string literal
    std::string out = "\"";
    for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
}

/// A file of tests/fixtures/bad/ (see its README.md); fails the test if it is missing.
inline std::string bad_fixture(const std::string& name) {
    const auto p = source_path("tests/fixtures/bad") / name;
    INFO("error fixture " << p << " is missing: run tests/fixtures/regenerate.sh");
    REQUIRE(fs::is_regular_file(p));
    return p.string();
}

/// The tool failed cleanly: an exit (not a crash), exactly one stderr line "graft: error: ..."
/// holding every fact (case-insensitive).
inline void check_cli_error(const CliResult& r, const std::vector<std::string>& facts) {
    INFO("stderr:\n" << r.err);
    CHECK(r.exit_code > 0);
    CHECK(r.exit_code < 126);  // an exit, not a crash
    const auto lines = r.err_lines();
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::StartsWith("graft: error: "));
    for (const auto& fact : facts) CHECK_THAT(lines[0], Catch::Contains(fact, Catch::CaseSensitive::No));
}

/// The built-in registry with the sample plugins loaded (their fixtures need them).
inline std::unique_ptr<graft::Registry> registry_with_plugins() {
    auto reg = graft::make_builtin_registry();
    for (const char* p : {"bias_layer", "channel_swish"}) {
        const auto path = fs::path(GRAFT_PLUGIN_DIR) / fmt::format("libgraft_{}.so", p);
        try {
            graft::load_plugin(path.string(), *reg);
        } catch (const graft::Error& e) {
            WARN("plugin " << path << " not loaded: " << e.what());
        }
    }
    return reg;
}

}  // namespace graft_test
