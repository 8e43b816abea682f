// graft/ir/dtype.hpp - element types.
//
// A value's dtype says what it holds. Inside a running graph every value is stored as float32
// (one 4-byte word per element, the "carrier"): an integer or bool value holds its exact value
// there, so integers of magnitude up to 2^24 are exact (kMaxExactInt). Host tensors
// (graft/tensor.hpp) hold each dtype in its own C++ type; Session::run converts at the boundary and
// refuses what the carrier or the declared dtype cannot hold exactly.
#pragma once

#include <cstddef>
#include <cmath>
#include <cstdint>
#include <string>

#include "graft/error.hpp"

namespace graft {

/// Element types. The first three keep their values (descriptors record names, not numbers).
enum class DType { float32, int32, int64, uint8, uint16, int8, boolean };

/// Every dtype, for listings and messages.
inline constexpr DType kAllDTypes[] = {DType::float32, DType::int32, DType::int64, DType::uint8,
                                       DType::uint16,  DType::int8,  DType::boolean};

/// The largest integer magnitude a float32 holds exactly with every integer below it (2^24).
inline constexpr std::int64_t kMaxExactInt = std::int64_t{1} << 24;

/// Bytes per element in a host tensor.
inline std::size_t size_of(DType t) {
    switch (t) {
        case DType::float32: return 4;
        case DType::int32: return 4;
        case DType::int64: return 8;
        case DType::uint8: return 1;
        case DType::uint16: return 2;
        case DType::int8: return 1;
        case DType::boolean: return 1;
    }
    return 0;
}

inline const char* name_of(DType t) {
    switch (t) {
        case DType::float32: return "float32";
        case DType::int32: return "int32";
        case DType::int64: return "int64";
        case DType::uint8: return "uint8";
        case DType::uint16: return "uint16";
        case DType::int8: return "int8";
        case DType::boolean: return "bool";
    }
    return "?";
}

inline bool is_integer(DType t) noexcept { return t != DType::float32 && t != DType::boolean; }

inline DType dtype_from_name(const std::string& s) {
    for (DType t : kAllDTypes)
        if (s == name_of(t)) return t;
    throw FormatError("unknown dtype '" + s + "', expected float32, int32, int64, uint8, uint16, int8 or bool");
}

/// v is a value of dtype t (integral and in range; 0 or 1 for bool; any value for float32).
inline bool holds(DType t, double v) noexcept {
    if (t == DType::float32) return true;
    if (t == DType::boolean) return v == 0 || v == 1;
    double lo = 0, hi = 0;
    switch (t) {
        case DType::int32: lo = -2147483648.0, hi = 2147483647.0; break;
        case DType::int64: lo = -9223372036854775808.0, hi = 9223372036854774784.0; break;  // the largest double below 2^63
        case DType::uint8: hi = 255; break;
        case DType::uint16: hi = 65535; break;
        case DType::int8: lo = -128, hi = 127; break;
        default: break;
    }
    return v >= lo && v <= hi && std::trunc(v) == v;  // false for NaN
}

}  // namespace graft
