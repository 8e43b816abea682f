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

/// One step of a row-major walk over n axes of sizes d (the last fastest): moves the multi-index
/// idx on, and the offsets o0 and o1 by their strides s0[k] and s1[k] along the axis k that moved.
/// Returns false, with idx all zero again, after the last position.
inline bool next_position(int n, const i64* d, i64* idx, i64& o0, const i64* s0, i64& o1, const i64* s1) {
    for (int k = n - 1; k >= 0; --k) {
        if (++idx[k] < d[k]) {
            o0 += s0[k];
            o1 += s1[k];
            return true;
        }
        o0 -= (d[k] - 1) * s0[k];
        o1 -= (d[k] - 1) * s1[k];
        idx[k] = 0;
    }
    return false;
}

/// The same walk with one offset.
inline bool next_position(int n, const i64* d, i64* idx, i64& o, const i64* s) {
    i64 unused = 0;
    return next_position(n, d, idx, o, s, unused, s);
}

}  // namespace graft_rt
