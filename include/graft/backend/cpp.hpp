// graft/backend/cpp.hpp - the generated C++ backend: a model as standalone, readable C++17.
//
//   graft::cpp::Options o;
//   o.name = "iris";            // OUT/iris.hpp, OUT/iris.cpp, OUT/iris.weights
//   o.batch = 1;                // fixed at generation
//   graft::cpp::generate(graft::keras::convert("iris.h5", reg), reg, o, "out/");
//
// The generated code needs nothing but the C++17 standard library: a `Session` class whose
// constructor reads and checks the weights file (size and checksum) and whose `infer()` runs the
// optimized graph on buffers planned at generation time (graft::optimize::plan_memory), without
// allocating. Every op becomes one function named after the op and its Keras layer; shared kernels
// are emitted once per model in namespace graft_rt. Emitters come from the Registry (key: op
// type; see graft/backend/cpp_emit.hpp), so plugins add their own.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graft/export.hpp"
#include "graft/ir/graph.hpp"
#include "graft/registry.hpp"

namespace graft::cpp {

struct Options {
    /// Base name of the files (`OUT/<name>.hpp`, `.cpp`, `.weights`); a C++ identifier-ish name.
    std::string name = "model";
    /// Namespace of the generated code; empty: the name.
    std::string ns;
    /// The batch size the code is generated for (inputs' N).
    std::int64_t batch = 1;
    /// Whole shapes (batch included) for inputs by name: required for an input with a free size
    /// other than the batch (a sequence's length, an image's height), whose code is fixed to the
    /// shape given. Fixed sizes must match the model's; the batch entry overrides `batch`.
    std::map<std::string, Shape> input_shapes;
    /// The weights as a constant array in `OUT/<name>_weights.cpp` instead of `OUT/<name>.weights`.
    bool embed_weights = false;
    /// Optimizer level of graft::optimize::pipeline_for (the graph given is not optimized yet).
    int opt_level = 2;
    /// Where the model came from, for the header comment.
    std::string source;
};

/// What was written.
struct Result {
    std::vector<std::string> files;  ///< paths, in the order written
    std::size_t ops = 0;             ///< op functions emitted
    std::size_t arena_bytes = 0;     ///< the Session's working memory (memory plan + scratch)
    std::size_t weight_bytes = 0;
};

/// Optimizes `graph` (a converted, unoptimized graph), fixes the batch and writes the C++ files
/// into directory `out_dir` (created if missing; each file goes to a temporary name first and
/// is renamed). UnsupportedError naming every op type without a cpp emitter, before anything is
/// written; ShapeError/GraphError from the optimizer or shape inference; IOError when writing fails.
GRAFT_API Result generate(Graph graph, const Registry& registry, const Options& options, const std::string& out_dir);

/// The files' text without writing them (tests, tools): name -> content. Weights as raw bytes.
struct Sources {
    std::vector<std::pair<std::string, std::string>> files;
    Result info;
};
GRAFT_API Sources generate_sources(Graph graph, const Registry& registry, const Options& options);

/// A C++ identifier made from `s` (letters, digits and '_'; never a keyword, never empty).
GRAFT_API std::string identifier(const std::string& s);

}  // namespace graft::cpp
