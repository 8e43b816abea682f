// The data caches of the CPU graft runs on, for choices that depend on what fits where (the
// batch slices of backend/native/batch_slices.hpp, the GEMM's k blocks; bench/roofline.cpp
// prints them).
#pragma once

#include <cstddef>

namespace graft::cpu {

/// Bytes of the level-1 data cache or the level-2 cache of one core (level 1, 2) or of the
/// level-3 cache cpu0 shares (level 3): from /sys (glibc's sysconf reports the L3 of a whole
/// package, or of every core added up, on some AMD virtual machines), else sysconf, else 32 KiB,
/// 1 MiB and 32 MiB (in the browser runtime). Reads files: callers keep the answer.
std::size_t cache_bytes(int level);

}  // namespace graft::cpu
