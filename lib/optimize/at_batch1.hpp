// Internal: the copy of a graph that batch-1 memory figures are taken on (plan_at_batch1, the
// descriptor's memory_plan).
#pragma once

#include "graft/registry.hpp"

namespace graft::optimize {

/// A copy of `g` with every dynamic dimension of its inputs set to 1 and the shapes inferred.
Graph clone_at_batch1(const Graph& g, const Registry& reg);

}  // namespace graft::optimize
