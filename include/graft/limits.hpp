// graft/limits.hpp - how much an untrusted model file may ask for (LoadOptions::limits).
//
// A model file is untrusted: its sizes are checked against these limits before anything is
// allocated, and a file beyond one is refused with a typed error naming the file, the limit and
// the value found, rather than exhausting memory. Raise them for trusted, very large models.
#pragma once

#include <cstddef>
#include <cstdint>

#include "graft/ir/checked.hpp"

namespace graft {

struct Limits {
    /// Bytes of a model file (and of a separate weights file): 4 GiB.
    std::uint64_t max_file_bytes = std::uint64_t{1} << 32;
    /// Elements of one tensor (a weight, an intermediate, an output at batch 1): 2^31. Can be
    /// lowered, not raised: kMaxElements is also the ceiling of graft's size arithmetic.
    std::int64_t max_tensor_elements = kMaxElements;
    /// Bytes of all weights, summed over their declared shapes before any is decoded (float32,
    /// as graft holds them): 4 GiB. Compressed datasets count at their decoded size.
    std::uint64_t max_total_weight_bytes = std::uint64_t{1} << 32;
    /// Nesting depth of a JSON model config or descriptor: 256.
    std::size_t max_json_depth = 256;
    /// Operators in the converted graph: 1,000,000.
    std::size_t max_graph_nodes = 1000000;
};

}  // namespace graft
