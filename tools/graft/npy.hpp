// tools/graft/npy.hpp - .npy files as graft Tensors (through xtensor), and atomic file writes.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "graft/tensor.hpp"

namespace graft::cli {

/// Reads a float32 .npy file (float64 is converted). FormatError naming the file for any other
/// dtype, a truncated file or something that is not a .npy file at all.
Tensor read_npy(const std::string& path);

/// The bytes of a float32 .npy file holding `t`.
std::string npy_bytes(const Tensor& t);

/// A file's path and its whole content.
using FileContent = std::pair<std::filesystem::path, std::string>;

/// Writes every file to a temporary name beside it, then renames them into place, so no file is
/// ever seen half-written; if a write fails, no temporary is left behind. IOError names the file.
void write_files_atomically(const std::vector<FileContent>& files);

}  // namespace graft::cli
