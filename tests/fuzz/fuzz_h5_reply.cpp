// libFuzzer target: the parent's side of HDF5 in a box, decoding graft-h5-reader's replies
// (h5_box_wire.hpp, h5_box_reply.hpp) from fuzz bytes, in process: no helper, no socket.
//
// The input is a stream of replies, each preceded by one byte that says which request it
// answers (its op, and for read_floats how many elements the request allowed), the way the
// parent reads them: status first, then the op's result. A reply that ends early stops the
// stream, as the helper's end of the socket closing does. A malformed reply must be a
// FormatError, never an allocation of what the reply merely claims.
#include <cstdint>
#include <cstring>
#include <string>

#include "frontend/keras/h5_box_reply.hpp"
#include "graft/error.hpp"

namespace {

struct EndOfInput {};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using graft::h5::wire::Op;
    std::size_t at = 0;
    auto read = [&](void* p, std::size_t n) {
        if (n > size - at) throw EndOfInput{};
        if (n) std::memcpy(p, data + at, n);
        at += n;
    };
    auto malformed = [](const std::string& what) { throw graft::FormatError("fuzz.h5: the HDF5 reader sent a malformed reply (" + what + ")"); };
    graft::h5::detail::ReplyReader reply(read, malformed);
    try {
        while (at < size) {
            const std::uint8_t pick = data[at++];
            const auto op = static_cast<Op>(1 + pick % 8);
            // read_floats: what the request allowed, 0 .. 2^31 (graft's default max_tensor_elements).
            const std::int64_t max_elements = (pick >> 3) == 31 ? std::int64_t{1} << 31 : (std::int64_t{1} << (pick >> 3)) - 1;
            try {
                if (auto failure = reply.status()) continue;  // an error reply: the stream is in step
                switch (op) {
                    case Op::has_group:
                    case Op::has_dataset:
                    case Op::has_attribute: reply.boolean(); break;
                    case Op::children: reply.strings(); break;
                    case Op::string_attribute:
                        if (reply.boolean()) {
                            std::uint64_t budget = graft::h5::wire::kMaxString;
                            reply.string(graft::h5::wire::kMaxString, budget);
                        }
                        break;
                    case Op::string_list_attribute:
                        if (reply.boolean()) reply.strings();
                        break;
                    case Op::read_floats: reply.floats(max_elements); break;
                    case Op::dataset_shape: reply.shape(); break;
                }
            } catch (const graft::Error&) {
                return 0;  // the parent stops the helper after a malformed reply
            }
        }
    } catch (const EndOfInput&) {
        // The helper's end closed mid-reply: Boxed reports how the helper ended.
    }
    return 0;
}
