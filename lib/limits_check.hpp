// Checks of a whole file or converted graph against LoadOptions::limits (graft/limits.hpp).
#pragma once

#include <string>

#include "graft/ir/graph.hpp"
#include "graft/limits.hpp"

namespace graft {

/// FormatError naming `path` if it is a regular file larger than limits.max_file_bytes (a
/// directory, a descriptor, is checked file by file by its reader).
void check_file_size(const std::string& path, const Limits& limits);

/// ShapeError / FormatError naming `path` if the converted graph has more operators than
/// max_graph_nodes, a variable with more static elements than max_tensor_elements, or weights
/// of more bytes than max_total_weight_bytes.
void check_graph_limits(const Graph& g, const Limits& limits, const std::string& path);

}  // namespace graft
