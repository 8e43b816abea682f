// See h5_box_reply.hpp.
#include "frontend/keras/h5_box_reply.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "graft/error.hpp"

namespace graft::h5::detail {

using wire::Status;

void ReplyReader::malformed(const std::string& what) {
    malformed_(what);
    throw FormatError("the HDF5 reader sent a malformed reply (" + what + ")");
}

std::optional<ReplyReader::Failure> ReplyReader::status() {
    const auto s = get<std::uint8_t>();
    if (s == static_cast<std::uint8_t>(Status::ok)) return std::nullopt;
    if (s > static_cast<std::uint8_t>(Status::error)) malformed(fmt::format("status {}", s));
    std::uint64_t budget = wire::kMaxMessage;
    return Failure{static_cast<Status>(s), string(wire::kMaxMessage, budget)};
}

bool ReplyReader::boolean() {
    const auto b = get<std::uint8_t>();
    if (b > 1) malformed(fmt::format("a boolean of {}", b));
    return b == 1;
}

std::string ReplyReader::string(std::uint64_t max, std::uint64_t& budget) {
    const auto n = get<std::uint32_t>();
    if (n > max || n > budget) malformed(fmt::format("a string of {} bytes, more than the {} allowed", n, std::min(max, budget)));
    budget -= n;
    // Grown as the bytes arrive (see floats()): a length alone allocates at most one chunk.
    constexpr std::uint32_t kChunk = std::uint32_t{1} << 16;
    std::string s;
    s.reserve(std::min(n, kChunk));
    for (std::uint32_t done = 0; done < n;) {
        const std::uint32_t k = std::min(n - done, kChunk);
        s.resize(done + k);
        read_(s.data() + done, k);
        done += k;
    }
    return s;
}

std::vector<std::string> ReplyReader::strings() {
    const auto count = get<std::uint32_t>();
    if (count > wire::kMaxStrings) malformed(fmt::format("{} strings, more than {}", count, wire::kMaxStrings));
    std::uint64_t budget = wire::kMaxStringsBytes;
    std::vector<std::string> out;
    out.reserve(std::min<std::uint32_t>(count, 4096));
    for (std::uint32_t i = 0; i < count; ++i) out.push_back(string(wire::kMaxString, budget));
    return out;
}

std::vector<std::int64_t> ReplyReader::shape() {
    const auto rank = get<std::uint32_t>();
    if (rank > wire::kMaxRank) malformed(fmt::format("rank {}, more than {}", rank, wire::kMaxRank));
    std::vector<std::int64_t> shape(rank);
    for (auto& d : shape) {
        d = get<std::int64_t>();
        if (d < 0) malformed(fmt::format("a dimension of {}", d));
    }
    return shape;
}

FloatArray ReplyReader::floats(std::int64_t max_elements) {
    FloatArray out;
    out.shape = shape();
    std::uint64_t n = 1;
    for (const auto d : out.shape) {
        const auto ud = static_cast<std::uint64_t>(d);
        if (ud != 0 && n > std::numeric_limits<std::uint64_t>::max() / ud) malformed("a shape of more than 2^64 elements");
        n *= ud;
    }
    const auto count = get<std::uint64_t>();
    const std::uint64_t limit = static_cast<std::uint64_t>(std::max<std::int64_t>(max_elements, 0));
    if (count != n || count > limit)
        malformed(fmt::format("{} values for a shape of {} elements (at most {} requested)", count, n, limit));
    // Grown as the values arrive, so a reply that promises more than it sends costs at most one
    // chunk beyond what was sent (a compromised helper cannot make graft allocate the limit).
    constexpr std::uint64_t kChunk = std::uint64_t{1} << 18;  // values: 1 MiB
    out.data.reserve(static_cast<std::size_t>(std::min(count, kChunk)));
    for (std::uint64_t done = 0; done < count;) {
        const std::uint64_t n = std::min(count - done, kChunk);
        out.data.resize(static_cast<std::size_t>(done + n));
        read_(out.data.data() + done, static_cast<std::size_t>(n) * sizeof(float));
        done += n;
    }
    return out;
}

}  // namespace graft::h5::detail
