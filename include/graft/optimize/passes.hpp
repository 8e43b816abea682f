// graft/optimize/passes.hpp - graph rewrites (passes, pipelines) and the memory plan.
//
// A pass is a Graph -> Graph rewrite that says whether it changed anything. Passes are grouped;
// a group runs its passes in turn until none fires (a fixpoint). A Pipeline is the list of groups
// for one optimization level and one backend (pipeline_for). Every pipeline runs legalize_layout
// last or before passes that keep layouts legal (fuse_elementwise), so whatever it returns is
// ready for a backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "graft/export.hpp"
#include "graft/ir/graph.hpp"
#include "graft/registry.hpp"

namespace graft::optimize {

/// Makes every operator's inputs arrive in the order its schema requires, by inserting
/// Transpose operators (one per variable and order, shared by all readers). Returns how many
/// were inserted. Every backend needs this; it changes no value.
GRAFT_API std::size_t legalize_layout(Graph& g, const Registry& reg);

/// Where every non-constant variable lives in one arena. Needs concrete shapes (no dynamic batch).
struct MemoryPlan {
    std::unordered_map<const Variable*, std::size_t> offset;  ///< bytes from the arena start
    std::size_t arena_bytes = 0;  ///< size of the arena
    std::size_t naive_bytes = 0;  ///< what one buffer per variable would take
    std::size_t inplace = 0;      ///< outputs written over their input (elementwise ops)
    std::size_t aliased = 0;      ///< outputs that are their input's bytes (reshape, identity)
    /// Concats the plan does the work of: each input is written by its producer straight into its
    /// slice of the output (the backend runs no kernel for them).
    std::vector<const Operator*> elided;
};

/// Lifetime analysis over the topological order, then greedy placement (largest first, lowest
/// offset that does not collide with a block alive at the same time), 64-byte aligned.
/// With `reuse` (the default), an output of an op whose schema has `alias` shares its input's
/// buffer, an output of an op whose schema has `inplace` takes over its first input's buffer
/// when that input is read by nothing later (and is not a graph output), and a Concat whose
/// inputs are each one contiguous block of its output (every axis before the concat axis has
/// size 1 at these shapes) and are written by ops (no alias, graph input or constant) for it
/// alone gets its inputs placed in their slices of the output (MemoryPlan::elided).
GRAFT_API MemoryPlan plan_memory(const Graph& g, const Registry& reg, bool reuse = true);
/// The plan without in-place reuse or aliasing (no registry needed).
GRAFT_API MemoryPlan plan_memory(const Graph& g);

/// A graph rewrite.
class GRAFT_API Pass {
public:
    virtual ~Pass() = default;
    virtual std::string name() const = 0;
    /// Rewrites `g`; true if anything changed. The graph stays valid (validate() passes).
    virtual bool run(Graph& g, const Registry& reg) = 0;
};

/// The built-in passes, by name (see pass_names()). UnsupportedError for an unknown name.
GRAFT_API std::unique_ptr<Pass> make_pass(const std::string& name);
/// Every built-in pass name.
GRAFT_API std::vector<std::string> pass_names();

/// What one pass did during a pipeline run (for `graft inspect --passes`).
struct PassStep {
    std::string group;
    std::string pass;
    std::size_t fired = 0;       ///< how many times it changed the graph
    std::size_t ops_before = 0;  ///< operator count before its first firing
    std::size_t ops_after = 0;   ///< operator count after its last firing
    /// Arena and naive bytes at batch 1 before and after (0 when the report has no memory figures).
    std::size_t arena_before = 0, arena_after = 0, naive_before = 0, naive_after = 0;
};

struct PipelineReport {
    std::string pipeline;
    std::vector<PassStep> steps;  ///< one per (group, pass) in pipeline order, fired or not
    std::size_t ops_before = 0, ops_after = 0;
    std::size_t arena_before = 0, arena_after = 0, naive_before = 0, naive_after = 0;
};

/// Memory figures of `g` at batch 1 (a copy with the batch fixed), for reports.
GRAFT_API MemoryPlan plan_at_batch1(const Graph& g, const Registry& reg);

class GRAFT_API Pipeline {
public:
    struct Group {
        std::string name;
        std::vector<std::unique_ptr<Pass>> passes;
    };

    explicit Pipeline(std::string name) : name_(std::move(name)) {}
    Pipeline(Pipeline&&) = default;
    Pipeline& operator=(Pipeline&&) = default;

    const std::string& name() const noexcept { return name_; }
    const std::vector<Group>& groups() const noexcept { return groups_; }

    /// Adds a group of passes (built-in names) run to a fixpoint.
    Pipeline& add_group(const std::string& name, const std::vector<std::string>& passes);
    Pipeline& add_group(Group g);

    /// Runs every group in order; fills `report` (with memory figures at batch 1 when
    /// `with_memory`). GraphError if a group does not reach a fixpoint in 64 rounds.
    void run(Graph& g, const Registry& reg, PipelineReport* report = nullptr, bool with_memory = false) const;

private:
    std::string name_;
    std::vector<Group> groups_;
};

/// The pipeline for an optimization level (0: layout legalization only; 1: safe folds - no-op
/// removal, constant folding, CSE, dead ops, transpose cancelling; 2: everything, elementwise
/// fusion last) and a backend ("native"; "cpp" for generated C++; "graft" for the descriptor, which
/// the native backend runs; all three share the passes for now). UnsupportedError for an unknown
/// backend or a level outside 0..2.
GRAFT_API Pipeline pipeline_for(int level, const std::string& backend = "native");

}  // namespace graft::optimize
