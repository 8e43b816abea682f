// graft-h5-reader: reads an untrusted HDF5 file for graft, out of graft's process.
//
//   graft-h5-reader FILE MAX_MEMORY_BYTES MAX_CPU_SECONDS     (started by graft, never by hand)
//   graft-h5-reader --check-sandbox                           (tests: confines itself, calls socket())
//
// fd 0 and fd 1 are one stream socket to graft (lib/frontend/keras/h5_box_spawn.cpp). The helper
// sets its resource limits and seccomp filter, opens FILE with graft::h5::File (in process, here),
// sends the open's outcome, then answers one request at a time until graft closes the socket.
// The wire format is lib/frontend/keras/h5_box_wire.hpp. Whatever the file does to HDF5 here
// (crash, loop, exhaust memory) ends this process only; graft reports it as a FormatError.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "frontend/keras/h5_box_wire.hpp"
#include "frontend/keras/h5_file.hpp"
#include "graft/error.hpp"
#include "sandbox.hpp"

namespace {

using graft::h5::wire::Op;
using graft::h5::wire::Status;
using graft::h5::wire::Writer;

void write_all(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const char*>(data);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::write(1, bytes + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) std::_Exit(3);  // graft has gone
        done += static_cast<std::size_t>(n);
    }
}

/// Reads exactly n bytes; false at a clean end of stream before the first byte.
bool read_all(void* p, std::size_t n) {
    auto* out = static_cast<char*>(p);
    std::size_t done = 0;
    while (done < n) {
        const ssize_t r = ::read(0, out + done, n - done);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0 && done == 0) return false;
        if (r <= 0) std::_Exit(3);
        done += static_cast<std::size_t>(r);
    }
    return true;
}

/// The arguments of one request (graft's own bytes: trusted, but still bounds-checked).
struct Args {
    std::string body;
    std::size_t pos = 1;  // after the op byte

    template <typename T>
    T get() {
        T v{};
        if (body.size() - pos < sizeof(T)) std::_Exit(4);
        std::memcpy(&v, body.data() + pos, sizeof(T));
        pos += sizeof(T);
        return v;
    }
    std::string str() {
        const auto n = get<std::uint32_t>();
        if (body.size() - pos < n) std::_Exit(4);
        std::string s = body.substr(pos, n);
        pos += n;
        return s;
    }
};

void put_strings(Writer& w, const std::vector<std::string>& v) {
    w.put(static_cast<std::uint32_t>(v.size()));
    for (const auto& s : v) w.put_string(s);
}

void put_shape(Writer& w, const std::vector<std::int64_t>& shape) {
    w.put(static_cast<std::uint32_t>(shape.size()));
    for (const auto d : shape) w.put(d);
}

/// Answers one request; the result follows Status::ok.
void answer(const graft::h5::File& f, Args& a, Writer& w) {
    const auto op = static_cast<Op>(static_cast<std::uint8_t>(a.body[0]));
    switch (op) {
        case Op::has_group: {
            const std::string p = a.str();
            w.put(static_cast<std::uint8_t>(f.has_group(p)));
            return;
        }
        case Op::has_dataset: {
            const std::string p = a.str();
            w.put(static_cast<std::uint8_t>(f.has_dataset(p)));
            return;
        }
        case Op::children: put_strings(w, f.children(a.str())); return;
        case Op::has_attribute: {
            const std::string obj = a.str(), name = a.str();
            w.put(static_cast<std::uint8_t>(f.has_attribute(obj, name)));
            return;
        }
        case Op::string_attribute: {
            const std::string obj = a.str(), name = a.str();
            const std::optional<std::string> s = f.string_attribute(obj, name);
            w.put(static_cast<std::uint8_t>(s.has_value()));
            if (s) w.put_string(*s);
            return;
        }
        case Op::string_list_attribute: {
            const std::string obj = a.str(), name = a.str();
            const auto v = f.string_list_attribute(obj, name);
            w.put(static_cast<std::uint8_t>(v.has_value()));
            if (v) put_strings(w, *v);
            return;
        }
        case Op::read_floats: {
            const std::string ds = a.str();
            const auto max_elements = a.get<std::int64_t>();
            const bool integers = a.get<std::uint8_t>() != 0;
            const graft::h5::FloatArray arr = f.read_floats(ds, max_elements, integers);
            put_shape(w, arr.shape);
            w.put(static_cast<std::uint64_t>(arr.data.size()));
            write_all(w.bytes.data(), w.bytes.size());  // the header, then the data without a copy
            w.bytes.clear();
            write_all(arr.data.data(), arr.data.size() * sizeof(float));
            return;
        }
        case Op::dataset_shape: put_shape(w, f.dataset_shape(a.str())); return;
    }
    std::_Exit(4);  // an op graft does not send
}

/// Runs `fn`, sending its result (Status::ok + what it wrote) or the error it threw.
template <typename Fn>
void reply(Fn&& fn) {
    Writer w;
    Status status = Status::ok;
    std::string message;
    try {
        w.put(static_cast<std::uint8_t>(Status::ok));
        fn(w);
    } catch (const graft::FormatError& e) {
        status = Status::format_error, message = e.what();
    } catch (const graft::IOError& e) {
        status = Status::io_error, message = e.what();
    } catch (const graft::Error& e) {
        status = Status::error, message = e.what();
    } catch (const std::bad_alloc&) {
        status = Status::no_memory;
    } catch (const std::exception& e) {
        status = Status::error, message = e.what();
    }
    if (status != Status::ok) {
        w.bytes.clear();
        w.put(static_cast<std::uint8_t>(status));
        w.put_string(message.substr(0, graft::h5::wire::kMaxMessage));
    }
    write_all(w.bytes.data(), w.bytes.size());
}

void reply_error(Status status, const std::string& message) {
    reply([&](Writer&) -> void {
        if (status == Status::io_error) throw graft::IOError(message);
        throw graft::Error(message);
    });
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "--check-sandbox") == 0) {
        const std::string err = graft::h5_reader::install_seccomp();
        if (!err.empty()) return 2;
        const int s = ::socket(AF_INET, SOCK_STREAM, 0);  // must not return: SIGSYS
        return s >= 0 ? 3 : 4;
    }
    if (argc != 4) return 2;
    const std::string path = argv[1];
    char* end = nullptr;
    const std::uint64_t max_memory = std::strtoull(argv[2], &end, 10);
    const std::uint64_t max_cpu = std::strtoull(argv[3], &end, 10);

    std::string err = graft::h5_reader::set_limits(max_memory, max_cpu);
    if (err.empty()) err = graft::h5_reader::install_seccomp();
    if (!err.empty()) {
        reply_error(Status::error, path + ": cannot confine the HDF5 reader (" + err + ")");
        return 2;
    }
    std::optional<graft::h5::File> file;
    reply([&](Writer&) { file.emplace(graft::h5::File::open(path)); });
    if (!file) return 0;
    for (;;) {
        std::uint32_t len = 0;
        if (!read_all(&len, sizeof len)) return 0;  // graft closed the socket: done
        if (len == 0 || len > graft::h5::wire::kMaxRequest) return 4;
        Args a;
        a.body.resize(len);
        read_all(a.body.data(), len);
        reply([&](Writer& w) { answer(*file, a, w); });
    }
}
