// graft/optimize/passes.hpp - graph rewrites and the memory plan.
#pragma once

#include <cstddef>
#include <unordered_map>

#include "graft/ir/graph.hpp"
#include "graft/registry.hpp"

namespace graft::optimize {

/// Makes every operator's inputs arrive in the order its schema requires, by inserting
/// Transpose operators (one per variable and order, shared by all readers). Returns how many
/// were inserted. Every backend needs this; it changes no value.
std::size_t legalize_layout(Graph& g, const Registry& reg);

/// Where every non-constant variable lives in one arena. Needs concrete shapes (no dynamic batch).
struct MemoryPlan {
    std::unordered_map<const Variable*, std::size_t> offset;  ///< bytes from the arena start
    std::size_t arena_bytes = 0;  ///< size of the arena
    std::size_t naive_bytes = 0;  ///< what one buffer per variable would take
};

/// Lifetime analysis over the topological order, then greedy placement (largest first, lowest
/// offset that does not collide with a block alive at the same time), 64-byte aligned.
MemoryPlan plan_memory(const Graph& g);

}  // namespace graft::optimize
