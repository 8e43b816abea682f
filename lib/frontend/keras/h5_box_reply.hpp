// Decoding the values of graft-h5-reader's replies (h5_box_wire.hpp) as untrusted input: every
// length is checked against the wire limits and against what the request allows before anything
// is allocated. Pure: the bytes come from a callback, so the decoder runs (and is fuzzed,
// tests/fuzz/fuzz_h5_reply.cpp) without a helper process or a socket.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "frontend/keras/h5_box_wire.hpp"
#include "frontend/keras/h5_file.hpp"

namespace graft::h5::detail {

class ReplyReader {
public:
    /// `read(p, n)` fills exactly `n` bytes at `p` or throws. `malformed(what)` throws the error
    /// for a reply graft cannot trust (it must not return; if it does, a FormatError is thrown).
    ReplyReader(std::function<void(void*, std::size_t)> read, std::function<void(const std::string&)> malformed)
        : read_(std::move(read)), malformed_(std::move(malformed)) {}

    /// A reply's status: nullopt for ok (its result follows), else the error status and message.
    struct Failure {
        wire::Status status;
        std::string message;
    };
    std::optional<Failure> status();

    bool boolean();
    /// A string of at most `max` bytes and at most `budget` (which it is taken from).
    std::string string(std::uint64_t max, std::uint64_t& budget);
    std::vector<std::string> strings();
    std::vector<std::int64_t> shape();
    /// read_floats' result: a shape and exactly as many values as it has elements, which must
    /// be at most `max_elements` (what the request allowed).
    FloatArray floats(std::int64_t max_elements);

private:
    template <typename T>
    T get() {
        T v;
        read_(&v, sizeof v);
        return v;
    }
    [[noreturn]] void malformed(const std::string& what);

    std::function<void(void*, std::size_t)> read_;
    std::function<void(const std::string&)> malformed_;
};

}  // namespace graft::h5::detail
