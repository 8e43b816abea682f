// graft_rt/core.hpp - what every reference kernel uses.
//
// lib/rt/graft_rt holds graft's reference kernels: standard-library-only C++17, compiled into
// libgraft (the native backend's scalar paths call them) and written, as text, into the code the
// cpp backend generates (cmake/GraftEmbed.cmake; graft::cpp::parse_kernel_header gives the layout
// each header follows). One source per kernel: never a string copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace graft_rt {

using i64 = std::int64_t;

inline std::size_t bytes(i64 floats) { return static_cast<std::size_t>(floats) * sizeof(float); }

/// y = x, unless they are the same memory.
inline void copy(const float* x, float* y, i64 n) {
    if (x != y && n > 0) std::memmove(y, x, bytes(n));
}

}  // namespace graft_rt
