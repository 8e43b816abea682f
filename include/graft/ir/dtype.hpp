// graft/ir/dtype.hpp - element types.
#pragma once

#include <cstddef>
#include <string>

#include "graft/error.hpp"

namespace graft {

enum class DType { float32, int32, int64 };

inline std::size_t size_of(DType t) {
    switch (t) {
        case DType::float32: return 4;
        case DType::int32: return 4;
        case DType::int64: return 8;
    }
    return 0;
}

inline const char* name_of(DType t) {
    switch (t) {
        case DType::float32: return "float32";
        case DType::int32: return "int32";
        case DType::int64: return "int64";
    }
    return "?";
}

inline DType dtype_from_name(const std::string& s) {
    if (s == "float32") return DType::float32;
    if (s == "int32") return DType::int32;
    if (s == "int64") return DType::int64;
    throw FormatError("unknown dtype '" + s + "', expected float32, int32 or int64");
}

}  // namespace graft
