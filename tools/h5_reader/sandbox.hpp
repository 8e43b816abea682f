// graft-h5-reader's confinement (sandbox.cpp). Each returns "" on success, else what failed.
#pragma once

#include <cstdint>
#include <string>

namespace graft::h5_reader {

/// RLIMIT_AS (`max_memory` bytes), RLIMIT_CPU, RLIMIT_FSIZE 0, RLIMIT_NOFILE 16, RLIMIT_NPROC 0, RLIMIT_CORE 0.
std::string set_limits(std::uint64_t max_memory, std::uint64_t max_cpu_seconds);

/// A seccomp filter: reading files opened read-only, writing to fds 1 and 2, memory without
/// PROT_EXEC, exit, signals to itself. Any other system call kills the process (SIGSYS).
std::string install_seccomp();

}  // namespace graft::h5_reader
