// The parent's side of HDF5 in a box (graft/hdf5_containment.hpp): a graft::h5::File whose reads
// are answered by the sandboxed helper graft-h5-reader, spawned with posix_spawn (never fork, so
// it is safe in a multi-threaded host), over a socket in the wire format of h5_box_wire.hpp.
// Replies are parsed as untrusted. The helper's crash, hang, resource overrun or malformed reply
// becomes a FormatError "<file>: <object>: the HDF5 reader crashed (SIGSEGV) while ...".
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "frontend/keras/h5_box_reply.hpp"
#include "frontend/keras/h5_box_wire.hpp"
#include "frontend/keras/h5_file.hpp"
#include "graft/hdf5_containment.hpp"

namespace graft::h5::detail {

/// The helper executable for `c` (h5_box_spawn.cpp): c.helper, $GRAFT_H5_HELPER, or
/// graft-h5-reader found relative to libgraft. graft::Error naming every place looked at if none.
std::string find_h5_helper(const Hdf5Containment& c);

/// A running helper: its process id and the parent's end of the socket (non-blocking).
struct HelperProcess {
    pid_t pid = -1;
    int fd = -1;
};

/// Spawns `helper` reading `file` under the limits of `c`. graft::Error if it cannot start.
HelperProcess spawn_h5_helper(const std::string& helper, const std::string& file, const Hdf5Containment& c);

/// Kills (SIGKILL) and reaps the helper unless it has already ended; returns how it ended
/// ("crashed (SIGSEGV)", "exited with status 2", ...), phrased after "the HDF5 reader ".
std::string end_h5_helper(pid_t pid, bool already_ending, const Hdf5Containment& c);

class Boxed {
public:
    /// Starts the helper and waits for it to open `path` (its FormatError/IOError rethrown here).
    Boxed(const std::string& path, const Hdf5Containment& c);
    ~Boxed();
    Boxed(const Boxed&) = delete;
    Boxed& operator=(const Boxed&) = delete;

    const std::string& path() const { return path_; }

    bool has_group(const std::string& p);
    bool has_dataset(const std::string& p);
    std::vector<std::string> children(const std::string& group);
    bool has_attribute(const std::string& obj, const std::string& name);
    std::optional<std::string> string_attribute(const std::string& obj, const std::string& name);
    std::optional<std::vector<std::string>> string_list_attribute(const std::string& obj, const std::string& name);
    FloatArray read_floats(const std::string& dataset, std::int64_t max_elements, bool integers);
    std::vector<std::int64_t> dataset_shape(const std::string& dataset);

private:
    std::string path_, helper_;
    Hdf5Containment opt_;
    HelperProcess proc_;
    std::mutex mutex_;                 // one request at a time
    std::string gone_;                 // once the helper has failed: the message every later call repeats
    std::string object_, doing_;       // the current request, for messages
    std::chrono::steady_clock::time_point deadline_;
    bool pending_ = false;             // a request is sent and its reply not wholly read
    ReplyReader reply_;                // decodes replies from recv_exact (h5_box_reply.hpp)

    template <typename F>
    auto call(F&& f);  // runs one request under the mutex; a failure mid-reply stops the helper
    FloatArray read_floats_locked(const std::string& dataset, std::int64_t max_elements, bool integers);

    // Sends one request and reads its status: returns if ok (the result follows), else throws.
    void request(wire::Op op, const std::string& object, const std::string& doing, const wire::Writer& args);
    void read_status();
    [[noreturn]] void helper_failed(const std::string& what, bool ending);
    [[noreturn]] void malformed(const std::string& what);
    void wait(short events);
    void send_all(const std::string& bytes);
    void recv_exact(void* p, std::size_t n);
};

}  // namespace graft::h5::detail
