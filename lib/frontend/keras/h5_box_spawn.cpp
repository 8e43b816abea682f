// Finding, starting and stopping graft-h5-reader (see h5_box.hpp). The helper is started with
// posix_spawn (no fork of the host: safe with other threads running, and cheap for a large host),
// with only the socket as its stdin/stdout, /dev/null as stderr, every other descriptor closed,
// default signal handling, an empty signal mask and a minimal environment. It sets its own
// resource limits and seccomp filter before it opens the file (tools/h5_reader/).
#include "frontend/keras/h5_box.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "graft/error.hpp"

// Set by CMake: where the helper is installed, relative to the bin and lib directories, and absolute.
#ifndef GRAFT_H5_HELPER_FROM_BINDIR
#define GRAFT_H5_HELPER_FROM_BINDIR "../libexec/graft"
#endif
#ifndef GRAFT_H5_HELPER_FROM_LIBDIR
#define GRAFT_H5_HELPER_FROM_LIBDIR "../libexec/graft"
#endif
#ifndef GRAFT_H5_HELPER_INSTALLED
#define GRAFT_H5_HELPER_INSTALLED "/usr/local/libexec/graft/graft-h5-reader"
#endif

extern char** environ;

namespace graft::h5::detail {

namespace {

namespace fs = std::filesystem;
constexpr const char* kHelperName = "graft-h5-reader";

bool executable(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

/// The directories of the object holding libgraft's code (the shared library, or the program it
/// is linked into) and of the running program.
std::vector<fs::path> own_dirs() {
    std::vector<fs::path> dirs;
    std::error_code ec;
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&find_h5_helper), &info) != 0 && info.dli_fname != nullptr &&
        std::strchr(info.dli_fname, '/') != nullptr) {
        const fs::path p = fs::canonical(info.dli_fname, ec);
        if (!ec) dirs.push_back(p.parent_path());
    }
    const fs::path exe = fs::canonical("/proc/self/exe", ec);
    if (!ec && (dirs.empty() || exe.parent_path() != dirs.front())) dirs.push_back(exe.parent_path());
    return dirs;
}

std::string signal_name(int sig) {
    const char* abbrev = ::sigabbrev_np(sig);
    return abbrev ? std::string("SIG") + abbrev : fmt::format("signal {}", sig);
}

}  // namespace

std::string find_h5_helper(const Hdf5Containment& c) {
    if (!c.helper.empty()) {
        if (!executable(c.helper))
            throw Error(fmt::format("the HDF5 reader {} (Hdf5Containment::helper) is not an executable file", c.helper));
        return c.helper;
    }
    if (const char* env = std::getenv("GRAFT_H5_HELPER"); env != nullptr && *env != '\0') {
        if (!executable(env))
            throw Error(fmt::format("the HDF5 reader {} ($GRAFT_H5_HELPER) is not an executable file", env));
        return env;
    }
    std::vector<fs::path> tried;
    for (const fs::path& dir : own_dirs())
        for (const char* rel : {".", GRAFT_H5_HELPER_FROM_BINDIR, GRAFT_H5_HELPER_FROM_LIBDIR})
            tried.push_back((dir / rel / kHelperName).lexically_normal());
    tried.emplace_back(GRAFT_H5_HELPER_INSTALLED);
    std::string list;
    for (const fs::path& p : tried) {
        if (executable(p)) return p.string();
        list += (list.empty() ? "" : ", ") + p.string();
    }
    throw Error(fmt::format("cannot find graft's HDF5 reader {} (looked at {}); set $GRAFT_H5_HELPER to its path, or read "
                            "trusted files in process (LoadOptions::hdf5.enabled = false, graft --hdf5-in-process)",
                            kHelperName, list));
}

HelperProcess spawn_h5_helper(const std::string& helper, const std::string& file, const Hdf5Containment& c) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        throw Error(fmt::format("{}: cannot create a socket for the HDF5 reader ({})", file, std::strerror(errno)));
    struct Closer {
        int* fds;
        ~Closer() {
            if (fds[1] >= 0) ::close(fds[1]);
        }
    } closer{sv};

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    // dup2 clears close-on-exec on the copies; every other descriptor of the host is closed.
    posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    const std::string mem = std::to_string(c.max_memory), cpu = std::to_string(c.max_cpu_seconds);
    std::vector<char*> argv{const_cast<char*>(helper.c_str()), const_cast<char*>(file.c_str()),
                            const_cast<char*>(mem.c_str()), const_cast<char*>(cpu.c_str()), nullptr};
    // No filter plugins (HDF5 would dlopen them); the library path as the host has it.
    std::vector<std::string> env_strings{"HDF5_PLUGIN_PRELOAD=::"};
    for (char** e = environ; e != nullptr && *e != nullptr; ++e)
        if (std::strncmp(*e, "LD_LIBRARY_PATH=", 16) == 0 || std::strncmp(*e, "ASAN_OPTIONS=", 13) == 0 ||
            std::strncmp(*e, "UBSAN_OPTIONS=", 14) == 0)
            env_strings.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);

    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, helper.c_str(), &fa, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        ::close(sv[0]);
        throw Error(fmt::format("{}: cannot start the HDF5 reader {} ({})", file, helper, std::strerror(rc)));
    }
    const int flags = ::fcntl(sv[0], F_GETFL);
    ::fcntl(sv[0], F_SETFL, flags | O_NONBLOCK);
    return HelperProcess{pid, sv[0]};
}

std::string end_h5_helper(pid_t pid, bool already_ending, const Hdf5Containment& c) {
    if (pid <= 0) return "ended";
    int status = 0;
    pid_t r = 0;
    if (already_ending) {  // it closed its socket: give it a moment to exit on its own
        for (int i = 0; i < 200 && (r = ::waitpid(pid, &status, WNOHANG)) == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (r == 0) {
        ::kill(pid, SIGKILL);
        while ((r = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
        }
        if (r == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !already_ending) return "was stopped";
    }
    if (r != pid) return "ended (its exit status is unknown: the host reaps child processes itself)";
    if (WIFEXITED(status))
        return WEXITSTATUS(status) == 0 ? "ended early" : fmt::format("exited with status {}", WEXITSTATUS(status));
    if (!WIFSIGNALED(status)) return "ended";
    const int sig = WTERMSIG(status);
    switch (sig) {
        case SIGSYS: return "was stopped by its sandbox (SIGSYS: a forbidden system call)";
        case SIGXCPU: return fmt::format("exceeded its CPU-time limit of {} s (SIGXCPU)", c.max_cpu_seconds);
        case SIGXFSZ: return "tried to write a file (SIGXFSZ)";
        case SIGKILL: return "was killed (SIGKILL: its CPU-time limit, or the system out of memory)";
        default: return fmt::format("crashed ({})", signal_name(sig));
    }
}

}  // namespace graft::h5::detail
