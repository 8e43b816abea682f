// tools/graft/npy.hpp - .npy files as graft Tensors (through xtensor).
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

}  // namespace graft::cli
