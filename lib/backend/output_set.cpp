// A directory of files written as one set (graft/backend/output_set.hpp).
#include "graft/backend/output_set.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_EXCHANGE
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "graft/error.hpp"

namespace graft {

namespace {

namespace fs = std::filesystem;

std::string os_error(int err) { return std::generic_category().message(err); }

/// Writes `content` to the new file `p` and fsyncs it.
void write_synced(const fs::path& p, const std::string& content) {
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw IOError(fmt::format("cannot create {}: {}", p.string(), os_error(errno)));
    std::size_t done = 0;
    int err = 0;
    while (done < content.size() && err == 0) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n > 0) done += static_cast<std::size_t>(n);
        else if (n < 0 && errno != EINTR) err = errno;
    }
    if (err == 0 && ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) throw IOError(fmt::format("cannot write {}: {}", p.string(), os_error(err)));
}

/// fsync of a directory, so a rename inside it is on disk.
void sync_dir(const fs::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw IOError(fmt::format("cannot open directory {}: {}", dir.string(), os_error(errno)));
    const int err = ::fsync(fd) == 0 ? 0 : errno;
    ::close(fd);
    if (err != 0 && err != EINVAL && err != EROFS)  // some filesystems cannot sync a directory
        throw IOError(fmt::format("cannot sync directory {}: {}", dir.string(), os_error(err)));
}

/// A directory removed with everything in it when this goes out of scope (unless released).
class Scratch {
public:
    explicit Scratch(fs::path p) : path_(std::move(p)) {}
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    ~Scratch() {
        std::error_code ec;
        if (!path_.empty()) fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }
    void release() { path_.clear(); }

private:
    fs::path path_;
};

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Why an existing `target` may not be replaced, or "" if it may.
std::string not_replaceable(const fs::path& target, const fs::file_status& st, const std::vector<std::string>& suffixes) {
    if (fs::is_symlink(st)) return "is a symbolic link";
    if (!fs::is_directory(st)) return "is not a directory";
    std::error_code ec;
    for (fs::directory_iterator it(target, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        bool ok = it->is_regular_file(ec) && !it->is_symlink(ec);
        bool known = false;
        for (const auto& s : suffixes) known = known || ends_with(name, s);
        if (!ok || !known) return "holds " + name + ", which graft did not write there";
    }
    if (ec) return "cannot be listed (" + ec.message() + ")";
    return {};
}

}  // namespace

void write_output_set(const std::string& dir, const std::vector<OutputFile>& files,
                      const std::vector<std::string>& replaceable_suffixes, const std::string& what, bool create_parents) {
    fs::path target = fs::path(dir).lexically_normal();
    if (target.filename().empty()) target = target.parent_path();  // "out/" -> "out"
    const std::string name = target.filename().string();
    if (name.empty() || name == "." || name == "..")
        throw IOError(fmt::format("cannot write {} to '{}': expected the name of a directory to create or replace", what, dir));
    for (const auto& [file, content] : files)
        if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
            throw IOError(fmt::format("cannot write {} to {}: '{}' is not a file name", what, target.string(), file));

    std::error_code ec;
    const fs::file_status st = fs::symlink_status(target, ec);
    const bool exists = fs::exists(st);
    if (exists) {
        const std::string why = not_replaceable(target, st, replaceable_suffixes);
        if (!why.empty()) throw IOError(fmt::format("cannot write {} to {}: it exists and {}", what, target.string(), why));
    }
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    if (create_parents) fs::create_directories(parent, ec);
    if (!fs::is_directory(parent, ec))
        throw IOError(fmt::format("cannot write {} to {}: directory {} does not exist", what, target.string(), parent.string()));

    static std::atomic<unsigned> counter{0};
    Scratch tmp(parent / fmt::format(".{}.graft-tmp.{}.{}", name, ::getpid(), counter++));
    if (::mkdir(tmp.path().c_str(), 0755) != 0)
        throw IOError(fmt::format("cannot create {}: {}", tmp.path().string(), os_error(errno)));
    for (const auto& [file, content] : files) write_synced(tmp.path() / file, content);
    sync_dir(tmp.path());

    if (!exists) {
        if (::rename(tmp.path().c_str(), target.c_str()) != 0)
            throw IOError(fmt::format("cannot write {}: {}", target.string(), os_error(errno)));
        tmp.release();
        sync_dir(parent);
        return;
    }
    // Swap the new set in and the old one out in one step; the scratch name then holds the old set.
    if (::renameat2(AT_FDCWD, tmp.path().c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
        sync_dir(parent);
        return;  // ~Scratch removes the old set
    }
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
        throw IOError(fmt::format("cannot replace {}: {}", target.string(), os_error(errno)));
    // A filesystem without the exchange: the old set aside, the new one in, the old one removed
    // (put back if the new one cannot go in).
    Scratch old(parent / fmt::format(".{}.graft-old.{}.{}", name, ::getpid(), counter++));
    if (::rename(target.c_str(), old.path().c_str()) != 0)
        throw IOError(fmt::format("cannot replace {}: {}", target.string(), os_error(errno)));
    if (::rename(tmp.path().c_str(), target.c_str()) != 0) {
        const int err = errno;
        const bool restored = ::rename(old.path().c_str(), target.c_str()) == 0;
        const std::string kept = old.path().string();
        old.release();  // restored, or (if that failed too) kept: never removed
        throw IOError(fmt::format("cannot replace {}: {}{}", target.string(), os_error(err),
                                  restored ? "" : "; the previous set is in " + kept));
    }
    tmp.release();
    sync_dir(parent);
}

void write_file_atomically(const std::string& path, const std::string& content) {
    const fs::path target(path);
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    static std::atomic<unsigned> counter{0};
    struct Temp {
        fs::path p;
        ~Temp() {
            std::error_code ec;
            if (!p.empty()) fs::remove(p, ec);
        }
    } tmp{parent / fmt::format(".{}.graft-tmp.{}.{}", target.filename().string(), ::getpid(), counter++)};
    write_synced(tmp.p, content);
    if (::rename(tmp.p.c_str(), target.c_str()) != 0)
        throw IOError(fmt::format("cannot write {}: {}", path, os_error(errno)));
    tmp.p.clear();
    sync_dir(parent);
}

}  // namespace graft
