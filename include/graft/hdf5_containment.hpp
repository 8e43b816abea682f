// graft/hdf5_containment.hpp - how graft reads the HDF5 part of a Keras model (.h5, .keras).
//
// HDF5 is a large C library, and a corrupt or hostile file can crash it (SIGSEGV, heap
// corruption) or make it loop. By default graft therefore reads HDF5 out of process: a small
// helper executable, graft-h5-reader, installed beside the library, runs under resource limits
// (address space, CPU time, no file writes, few descriptors) and a seccomp filter (read-only
// files, no network, no exec), and answers graft's read requests over a socket in graft's own
// length-prefixed format, which graft checks as untrusted. A crash, hang or resource overrun of
// the helper becomes a graft::FormatError naming the file. See docs/security.md for the cost.
#pragma once

#include <cstdint>
#include <string>

namespace graft {

struct Hdf5Containment {
    /// true: read HDF5 in the sandboxed helper process. false: in this process (trusted files
    /// only, or a platform without the helper).
    bool enabled = true;
    /// The helper executable. Empty: $GRAFT_H5_HELPER if set, else graft-h5-reader beside the
    /// program or shared library holding libgraft (same directory, or ../libexec/graft), else
    /// the install prefix's libexec/graft.
    std::string helper;
    /// Wall-clock limit for one read request (opening the file, one attribute, one dataset).
    double timeout_seconds = 120;
    /// The helper's address-space limit (RLIMIT_AS), in bytes.
    std::uint64_t max_memory = std::uint64_t{16} << 30;
    /// The helper's CPU-time limit (RLIMIT_CPU) for the whole file, in seconds.
    std::uint64_t max_cpu_seconds = 600;
};

}  // namespace graft
