// graft/backend/output_set.hpp - a directory of files written as one set: whole or not at all.
//
// Used by everything graft writes as several files that belong together: a descriptor
// (graph.json + weights.bin), the generated C++ backend (<name>.hpp, .cpp, .weights) and
// `graft run --output-dir` (one .npy per output). The files are written into a temporary sibling
// directory (.<dir>.graft-tmp.<pid>.<n>), each file and the directory fsync'ed, then the directory
// takes the target's place with one rename: an atomic exchange (renameat2 RENAME_EXCHANGE) when
// the target exists, so readers see the old set or the new one, never a mix, and the old set is
// removed only after the new one is in place. If anything fails, the target is left as it was
// and no temporary remains.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graft/export.hpp"

namespace graft {

/// One file of a set: its name inside the directory (no '/') and its bytes.
using OutputFile = std::pair<std::string, std::string>;

/// Writes `files` as the directory `dir`. `dir` may not exist yet (its parent must); an existing
/// `dir` is replaced only if it is empty or holds nothing but regular files whose names end with
/// one of `replaceable_suffixes` (a previous set of the same kind), else IOError names it and
/// what it holds. IOError names the file for any write failure. `what` names the set in
/// messages ("a descriptor", "the outputs"). `create_parents`: create missing parent directories
/// first (else a missing parent is an IOError).
GRAFT_API void write_output_set(const std::string& dir, const std::vector<OutputFile>& files,
                                const std::vector<std::string>& replaceable_suffixes, const std::string& what,
                                bool create_parents = false);

/// Writes one file the same way: into a temporary sibling file (.NAME.graft-tmp.PID.N), synced
/// to disk, renamed over `path`, then the directory synced. IOError names the file; no temporary
/// remains.
GRAFT_API void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace graft
