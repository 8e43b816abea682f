// What the libFuzzer targets in tests/fuzz/ share: a scratch directory for the readers that take
// paths, the built-in registry, and the lowered limits every target loads with.
//
// A target passes when graft answers every input with a result or a graft::Error (a typed error:
// FormatError, ShapeError, ...). Any other exception escapes LLVMFuzzerTestOneInput and libFuzzer
// reports it as a crash, as it does a sanitizer report, a leak or a timeout.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "graft/graft.hpp"
#include "graft/limits.hpp"

namespace graft_fuzz {

/// A directory of this process's own (under $TMPDIR, /dev/shm if there is none), removed at exit.
inline const std::string& scratch_dir() {
    static const std::string dir = [] {
        const char* tmp = std::getenv("TMPDIR");
        std::string base = tmp && *tmp ? tmp : (std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp");
        std::string templ = base + "/graft-fuzz-XXXXXX";
        if (!::mkdtemp(templ.data())) throw std::runtime_error("cannot create a scratch directory under " + base);
        static std::string remove_at_exit;
        remove_at_exit = templ;
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(remove_at_exit, ec);
        });
        return templ;
    }();
    return dir;
}

/// Replaces `path` with `n` bytes.
inline void write_file(const std::string& path, const std::uint8_t* data, std::size_t n) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
    if (!f || (n && std::fwrite(data, 1, n, f.get()) != n)) throw std::runtime_error("cannot write " + path);
}

/// The built-in registry, made once.
inline const graft::Registry& registry() {
    static const std::unique_ptr<graft::Registry> r = graft::make_builtin_registry();
    return *r;
}

/// graft's limits lowered so that what a small input may ask for stays well inside libFuzzer's
/// memory limit (-rss_limit_mb, 2 GiB): a limit reached is a clean error like any other.
inline graft::Limits limits() {
    graft::Limits l;
    l.max_file_bytes = std::uint64_t{64} << 20;
    l.max_tensor_elements = std::int64_t{1} << 24;
    l.max_total_weight_bytes = std::uint64_t{256} << 20;
    l.max_graph_nodes = 100000;
    return l;
}

/// Loads `path` the way a host does (the built-in registry, the lowered limits); a graft::Error
/// (a typed error naming the file) is an answer like a graph.
inline void load_graph_or_error(const std::string& path) {
    graft::LoadOptions options;
    options.registry = &registry();
    options.limits = limits();
    try {
        const graft::Graph g = graft::load_graph(path, options);
        (void)g;
    } catch (const graft::Error&) {
    }
}

}  // namespace graft_fuzz
