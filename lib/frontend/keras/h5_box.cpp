// The parent's side of HDF5 in a box: requests to graft-h5-reader and their untrusted replies.
// See h5_box.hpp; the process handling (finding, spawning, reaping the helper) is in
// h5_box_spawn.cpp, the helper itself in tools/h5_reader/.
#include "frontend/keras/h5_box.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <system_error>

#include "graft/error.hpp"

namespace graft::h5::detail {

using wire::Op;
using wire::Status;
using Clock = std::chrono::steady_clock;

Boxed::Boxed(const std::string& path, const Hdf5Containment& c)
    : path_(path), helper_(find_h5_helper(c)), opt_(c),
      reply_([this](void* p, std::size_t n) { recv_exact(p, n); }, [this](const std::string& what) { malformed(what); }) {
    proc_ = spawn_h5_helper(helper_, path, c);
    std::lock_guard<std::mutex> lock(mutex_);
    object_ = "/";
    doing_ = "opening the file";
    deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(std::max(opt_.timeout_seconds, 0.001)));
    try {
        read_status();
    } catch (...) {
        end_h5_helper(proc_.pid, false, opt_);
        ::close(proc_.fd);
        throw;
    }
}

Boxed::~Boxed() {
    if (proc_.fd >= 0) ::close(proc_.fd);  // the helper reads EOF and exits
    if (gone_.empty()) end_h5_helper(proc_.pid, false, opt_);
}

void Boxed::helper_failed(const std::string& what, bool ending) {
    if (gone_.empty()) {
        const std::string how = end_h5_helper(proc_.pid, ending, opt_);
        gone_ = fmt::format("{}: {}: the HDF5 reader {} while {}; the file is corrupt or hostile (it was read by "
                            "the sandboxed helper {}, which was stopped)",
                            path_, object_, what.empty() ? how : what, doing_, helper_);
    }
    throw FormatError(gone_);
}

void Boxed::malformed(const std::string& what) {
    // A reply graft cannot trust: the helper is stopped and the file refused.
    helper_failed("sent a malformed reply (" + what + ")", false);
}

void Boxed::wait(short events) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
        if (left <= 0)
            helper_failed(fmt::format("timed out after {} s", opt_.timeout_seconds), false);
        pollfd p{proc_.fd, events, 0};
        const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
        if (r > 0) return;  // ready, or hung up / error: the read or write says which
        if (r < 0 && errno != EINTR)
            throw Error(fmt::format("{}: cannot wait for the HDF5 reader ({})", path_, std::strerror(errno)));
    }
}

void Boxed::send_all(const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        wait(POLLOUT);
        const ssize_t n = ::send(proc_.fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) done += static_cast<std::size_t>(n);
        else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
        else helper_failed("", true);  // EPIPE / ECONNRESET: it is gone
    }
}

void Boxed::recv_exact(void* p, std::size_t n) {
    auto* out = static_cast<char*>(p);
    while (n > 0) {
        wait(POLLIN);
        const ssize_t r = ::recv(proc_.fd, out, n, MSG_DONTWAIT);
        if (r > 0) {
            out += r;
            n -= static_cast<std::size_t>(r);
        } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            continue;
        } else {
            helper_failed("", true);  // EOF or reset mid-reply: it ended
        }
    }
}

void Boxed::read_status() {
    auto failure = reply_.status();
    if (!failure) return;
    pending_ = false;  // a whole (error) reply: the stream is in step
    switch (failure->status) {
        case Status::format_error: throw FormatError(failure->message);
        case Status::io_error: throw IOError(failure->message);
        case Status::no_memory:
            throw FormatError(fmt::format("{}: {}: the HDF5 reader ran out of memory (its limit is {} MiB) while {}; "
                                          "the file asks for more than it may", path_, object_, opt_.max_memory >> 20, doing_));
        default: throw Error(failure->message);
    }
}

template <typename F>
auto Boxed::call(F&& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
        auto result = f();
        pending_ = false;
        return result;
    } catch (...) {
        // Failed in the middle of a reply (e.g. no memory here for a large dataset): the stream is
        // out of step, so the helper is stopped and every later read repeats why.
        if (pending_ && gone_.empty()) {
            end_h5_helper(proc_.pid, false, opt_);
            gone_ = fmt::format("{}: {}: reading from the HDF5 reader was interrupted while {}", path_, object_, doing_);
        }
        pending_ = false;
        throw;
    }
}

void Boxed::request(Op op, const std::string& object, const std::string& doing, const wire::Writer& args) {
    if (!gone_.empty()) throw FormatError(gone_);
    object_ = object;
    doing_ = doing;
    deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(std::max(opt_.timeout_seconds, 0.001)));
    if (args.bytes.size() + 1 > wire::kMaxRequest)
        throw FormatError(fmt::format("{}: {}: a name of {} bytes, expected at most {}", path_, object, args.bytes.size(),
                                      wire::kMaxRequest - 1));
    wire::Writer w;
    w.put(static_cast<std::uint32_t>(args.bytes.size() + 1));
    w.put(static_cast<std::uint8_t>(op));
    w.bytes += args.bytes;
    pending_ = true;
    send_all(w.bytes);
    read_status();
}

namespace {
wire::Writer args_of(const std::string& a) {
    wire::Writer w;
    w.put_string(a);
    return w;
}
wire::Writer args_of(const std::string& a, const std::string& b) {
    wire::Writer w = args_of(a);
    w.put_string(b);
    return w;
}
}  // namespace

bool Boxed::has_group(const std::string& p) {
    return call([&] {
        request(Op::has_group, p, "looking for a group", args_of(p));
        return reply_.boolean();
    });
}

bool Boxed::has_dataset(const std::string& p) {
    return call([&] {
        request(Op::has_dataset, p, "looking for a dataset", args_of(p));
        return reply_.boolean();
    });
}

std::vector<std::string> Boxed::children(const std::string& group) {
    return call([&] {
        request(Op::children, group, "listing a group", args_of(group));
        return reply_.strings();
    });
}

bool Boxed::has_attribute(const std::string& obj, const std::string& name) {
    return call([&] {
        request(Op::has_attribute, obj, "looking for an attribute", args_of(obj, name));
        return reply_.boolean();
    });
}

std::optional<std::string> Boxed::string_attribute(const std::string& obj, const std::string& name) {
    return call([&]() -> std::optional<std::string> {
        request(Op::string_attribute, obj, "reading attribute '" + name + "'", args_of(obj, name));
        if (!reply_.boolean()) return std::nullopt;
        std::uint64_t budget = wire::kMaxString;
        return reply_.string(wire::kMaxString, budget);
    });
}

std::optional<std::vector<std::string>> Boxed::string_list_attribute(const std::string& obj, const std::string& name) {
    return call([&]() -> std::optional<std::vector<std::string>> {
        request(Op::string_list_attribute, obj, "reading attribute '" + name + "'", args_of(obj, name));
        if (!reply_.boolean()) return std::nullopt;
        return reply_.strings();
    });
}

FloatArray Boxed::read_floats(const std::string& dataset, std::int64_t max_elements, bool integers) {
    return call([&] { return read_floats_locked(dataset, max_elements, integers); });
}

FloatArray Boxed::read_floats_locked(const std::string& dataset, std::int64_t max_elements, bool integers) {
    wire::Writer args = args_of(dataset);
    args.put(max_elements);
    args.put(static_cast<std::uint8_t>(integers));
    request(Op::read_floats, dataset, "reading a dataset", args);
    return reply_.floats(max_elements);
}

std::vector<std::int64_t> Boxed::dataset_shape(const std::string& dataset) {
    return call([&] {
        request(Op::dataset_shape, dataset, "reading a dataset's shape", args_of(dataset));
        return reply_.shape();
    });
}

}  // namespace graft::h5::detail
