// Internal: what the descriptor writer and reader share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(GRAFT_RUNTIME_ONLY)
#include <boost/crc.hpp>  // the browser runtime has no zlib
#else
#include <zlib.h>
#endif

namespace graft::descriptor::detail {

constexpr std::size_t kAlign = 64;
constexpr const char* kGraphFile = "graph.json";
constexpr const char* kWeightsFile = "weights.bin";
constexpr const char* kFormatName = "graft-descriptor";

/// The CRC-32 (ISO-HDLC, as zlib's) of `n` bytes: zlib's, fed in chunks that fit its uInt, or
/// Boost.CRC's in the browser runtime.
inline std::uint32_t crc32_of(const unsigned char* p, std::size_t n) {
#if defined(GRAFT_RUNTIME_ONLY)
    boost::crc_32_type crc;
    crc.process_bytes(p, n);
    return crc.checksum();
#else
    uLong crc = ::crc32(0L, Z_NULL, 0);
    while (n > 0) {
        const uInt chunk = n > (1u << 30) ? (1u << 30) : static_cast<uInt>(n);
        crc = ::crc32(crc, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return static_cast<std::uint32_t>(crc);
#endif
}

inline bool little_endian() {
    const std::uint32_t one = 1;
    unsigned char b;
    std::memcpy(&b, &one, 1);
    return b == 1;
}

/// Attribute type tags in graph.json, indexed like AttrValue's alternatives.
inline const char* const kAttrTags[] = {"bool", "int", "float", "string", "ints", "floats", "strings"};

}  // namespace graft::descriptor::detail
