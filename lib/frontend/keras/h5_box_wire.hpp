// The wire format between graft (the parent) and graft-h5-reader (the sandboxed helper that
// reads HDF5; see graft/hdf5_containment.hpp). One stream socket; host byte order (both ends
// are the same machine). Every value is a fixed-size integer or a length-prefixed byte string:
//
//   request  = u32 body_length, body;  body = u8 op, args
//   reply    = u8 status, (status == kOk ? result : string message)
//   string   = u32 length, bytes
//   strings  = u32 count, string * count
//   shape    = u32 rank, i64 * rank
//
// At start the helper sends one reply to the implicit "open" (kOk with no result, or an error).
// Results per op: has_* -> u8 (0/1); children -> strings; string_attribute -> u8 present,
// [string]; string_list_attribute -> u8 present, [strings]; dataset_shape -> shape;
// read_floats (args: string path, i64 max_elements, u8 integers) -> shape, u64 count, f32 * count.
// The parent reads replies as untrusted: every length is checked against the limits below and
// against what the request allows before anything is allocated (h5_box.cpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace graft::h5::wire {

enum class Op : std::uint8_t {
    has_group = 1,
    has_dataset,
    children,
    has_attribute,
    string_attribute,
    string_list_attribute,
    read_floats,
    dataset_shape,
};

enum class Status : std::uint8_t {
    ok = 0,
    format_error,  ///< graft::FormatError from the reader: the message names the file and object
    io_error,      ///< graft::IOError (the file cannot be opened)
    no_memory,     ///< std::bad_alloc in the helper (its address-space limit)
    error,         ///< any other graft::Error
};

// Limits the parent enforces on replies (the reader's own limits are smaller; see h5_attributes.cpp).
inline constexpr std::uint32_t kMaxRequest = std::uint32_t{1} << 20;          // one request body
inline constexpr std::uint32_t kMaxMessage = std::uint32_t{1} << 16;          // an error message
inline constexpr std::uint32_t kMaxString = (std::uint32_t{64} << 20) + 16;   // one string (model_config)
inline constexpr std::uint64_t kMaxStringsBytes = std::uint64_t{256} << 20;   // all strings of one reply
inline constexpr std::uint32_t kMaxStrings = std::uint32_t{1} << 22;          // strings in one reply
inline constexpr std::uint32_t kMaxRank = 8;

/// Appends values to a byte buffer (both ends build messages with it).
struct Writer {
    std::string bytes;

    template <typename T>
    void put(T v) {
        char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        bytes.append(b, sizeof(T));
    }
    void put_string(const std::string& s) {
        put(static_cast<std::uint32_t>(s.size()));
        bytes += s;
    }
};

}  // namespace graft::h5::wire
