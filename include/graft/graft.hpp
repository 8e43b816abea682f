// graft/graft.hpp - the one include a host application needs.
//
//   auto model = graft::load("model.h5");
//   auto out = model.run({{"input_1", graft::Tensor({1, 28, 28, 1}, pixels)}});
//   const graft::Tensor& probs = out.at("dense_2");
//
// A Model is immutable after loading and safe to share between threads. Model::run is
// convenient and serializes callers; for concurrent inference give each thread its own
// Session. The batch dimension is free: any batch size runs without reconversion (each new
// size is compiled once, on first use). So are the sizes a Keras model was saved with None in
// (a sequence's length, a fully convolutional model's height and width): each new input shape
// is compiled once, on first use, and the last kMaxValuePrograms of them are kept.
//
// Plugins (custom layers, op types, kernels; see graft/plugin.hpp) load into a Registry:
//
//   auto reg = graft::make_builtin_registry();
//   graft::load_plugin("libgraft_bias_layer.so", *reg);   // or graft::load_plugins_from_env(*reg)
//   graft::LoadOptions o;
//   o.registry = reg.get();
//   auto model = graft::load("model.h5", o);
//
// Lifetimes: a Registry must outlive every Model made with it, because a Model compiles each new
// batch size with the registry's op schemas and generators. A Model also keeps the plugin
// libraries its registry held when the Model was made loaded until the Model is destroyed (its
// graph and compiled kernels may hold plugin code), so destroying a Model is always safe; but
// running a Model whose Registry is gone is undefined behaviour. Loading plugins into a registry
// is not thread-safe with other uses of it: load them first, then convert and run.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graft/error.hpp"
#include "graft/export.hpp"
#include "graft/hdf5_containment.hpp"
#include "graft/ir/graph.hpp"
#include "graft/limits.hpp"
#include "graft/plugin_loader.hpp"
#include "graft/precision.hpp"
#include "graft/registry.hpp"
#include "graft/tensor.hpp"
#include "graft/version.hpp"

namespace graft {

/// The registry with every built-in op, converter and generator (created on first use). It
/// does not read GRAFT_PLUGIN_PATH by itself: call load_plugins_from_env(default_registry()).
/// The graft tool loads its --plugin files and GRAFT_PLUGIN_PATH's plugins here.
GRAFT_API Registry& default_registry();

/// A fresh registry holding the built-ins only (tests and hosts that want isolation).
GRAFT_API std::unique_ptr<Registry> make_builtin_registry();

struct LoadOptions {
    /// Where handlers come from; null means default_registry(). Must outlive the Model (see the
    /// lifetimes note at the top of this file).
    const Registry* registry = nullptr;
    /// For a model.to_json() + save_weights() pair: the weights file (path is the JSON).
    std::string weights_path;
    /// Optimizer level (graft::optimize::pipeline_for): 0 layout only, 1 safe folds, 2 everything.
    int opt_level = 2;
    /// Intra-op threads each session runs with (the calling thread included); 0 means one per
    /// available core. Also settable later with Model::set_threads.
    int threads = 1;
    /// What an untrusted file may ask for (sizes, nesting, node count); see graft/limits.hpp.
    Limits limits;
    /// How a Keras model's HDF5 part is read: by default out of process, in the sandboxed helper
    /// graft-h5-reader (see graft/hdf5_containment.hpp); `hdf5.enabled = false` reads in process.
    Hdf5Containment hdf5;
    /// The products' arithmetic (graft/precision.hpp): fp32 (exact to float rounding), or int8
    /// where the CPU runs it faster (Model::precision() says what runs).
    Precision precision = Precision::fp32;
    /// How a batch runs (Session::batch_plan): 0 lets graft run a large batch a few samples at a
    /// time where its cost model says the activations then stay in cache and the work is not in
    /// the arithmetic (a convolutional network of small, memory-bound layers at batch 32); n > 0
    /// runs batches larger than n in slices of n; -1 runs every batch whole. Slices are only ever
    /// used where the graph computes each sample from that sample alone, so the results do not
    /// change. Also settable later with Model::set_batch_slice.
    std::int64_t batch_slice = 0;
    /// Where the native backend keeps prepacked weights. true: in 2 MB-aligned chunks of 4 MB or
    /// more that Linux is asked to back with transparent huge pages (weights streamed from L3 or
    /// memory run faster; up to 2 MB more resident memory per model). false: each block an
    /// allocation of its own on ordinary pages. Also settable later with Model::set_huge_pages.
    bool huge_pages = true;
};

/// How a session runs a batch (Session::batch_plan, LoadOptions::batch_slice).
struct BatchPlan {
    std::int64_t batch = 0;  // the inputs' batch; 0 when the model's inputs have no free batch axis
    std::int64_t slice = 0;  // samples per run of the compiled program: `batch` when it runs whole
    std::string mixing;      // why the graph may not run in slices; "" when it may (or batch < 2)
};

class Session;

/// A model whose graph depends on the values of some of its inputs (an ONNX Reshape, Slice or
/// ReduceSum whose shape, starts or axes is a model input): graft::load makes one of these when
/// that is all that stops a conversion. The Model converts and compiles the graph once per
/// distinct value of those inputs, on first use.
struct ValueSpecialisedGraph {
    /// The model's inputs and outputs as declared, without operators.
    Graph signature;
    /// The inputs whose values the graph depends on (fixed shapes, at most a few thousand elements).
    std::vector<std::string> value_inputs;
    /// The graph for those inputs' values (by name); it has the signature's inputs and outputs.
    std::function<Graph(const std::map<std::string, Tensor>& values)> convert;
};

class GRAFT_API Model {
public:
    /// Wraps an IR graph (already converted) for running, after the optimizer pipeline of
    /// `opt_level` for the native backend (see LoadOptions::opt_level).
    /// `precision` as LoadOptions::precision.
    Model(Graph graph, const Registry& registry, int opt_level = 2, Precision precision = Precision::fp32);
    /// A model converted per value of some inputs (see ValueSpecialisedGraph); graph() is then
    /// the signature only.
    Model(ValueSpecialisedGraph source, const Registry& registry, int opt_level = 2,
          Precision precision = Precision::fp32);
    ~Model();
    Model(Model&&) noexcept;
    Model& operator=(Model&&) noexcept;

    const Graph& graph() const;
    const Registry& registry() const;

    std::size_t num_inputs() const;
    std::size_t num_outputs() const;
    std::string input_name(std::size_t i) const;
    std::string output_name(std::size_t i) const;
    /// Shapes with the batch and any other free size (graft::has_free_sizes) as graft::kDynamic
    /// (-1); an output's size that follows a free input size is kDynamic too.
    Shape input_shape(std::size_t i) const;
    Shape output_shape(std::size_t i) const;
    /// The element type an input takes (graft/ir/dtype.hpp). run() accepts a tensor of this dtype,
    /// or of any other whose values it holds exactly (float32 3.0 for an int32 input, int32 for an
    /// int64 one), and throws DTypeError naming the input otherwise.
    DType input_dtype(std::size_t i) const;
    /// The element type of an output: the tensors run() returns have it.
    DType output_dtype(std::size_t i) const;
    /// The inputs whose values the graph depends on (empty for most models). Each distinct value
    /// given to run() is converted and compiled once, on first use; the last
    /// kMaxValuePrograms of them are kept (so are the programs of a model with free sizes other
    /// than the batch, one per input shape).
    const std::vector<std::string>& value_inputs() const;
    static constexpr std::size_t kMaxValuePrograms = 32;

    /// Runs the model. Inputs by name (every input required); outputs by name.
    std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs) const;
    /// Runs with inputs in model order; outputs in model order.
    std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;

    /// A session with its own working memory, for running on several threads at once.
    Session session() const;

    /// Intra-op threads of sessions created from now on (and of Model::run's session if it
    /// does not exist yet); 0 means one per available core.
    void set_threads(int threads);
    int threads() const;

    /// LoadOptions::batch_slice for sessions running from now on: not while another thread
    /// runs the model. Error unless >= -1.
    void set_batch_slice(std::int64_t slice);
    std::int64_t batch_slice() const;

    /// LoadOptions::huge_pages for the weights packed from now on (they are packed when a
    /// program is compiled, on the first run of each batch size): call it before the first run.
    void set_huge_pages(bool on);
    bool huge_pages() const;

    /// The arithmetic this model's products run in: the precision asked for, or fp32 where the
    /// CPU has no faster int8 path.
    Precision precision() const;

    struct Shared;

private:
    std::shared_ptr<Shared> shared_;
};

/// The time one operator took over a session's profiled runs (Session::set_profiling).
struct OpProfile {
    std::string type;    // the IR operator type (Conv2D, Linear, ...)
    std::string name;    // the operator's name
    std::string layer;   // the model layer (or ONNX node) it came from; empty for graft's own
    double seconds = 0;  // wall time summed over the runs
    std::int64_t runs = 0;
};

class GRAFT_API Session {
public:
    ~Session();
    Session(Session&&) noexcept;
    Session& operator=(Session&&) noexcept;

    std::vector<Tensor> run(const std::vector<Tensor>& inputs);
    std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs);

    /// Intra-op threads this session runs with.
    int threads() const;
    /// How run() would run `inputs` (checked as run() checks them): whole or in slices of the
    /// batch, and why not in slices when the graph mixes samples.
    BatchPlan batch_plan(const std::vector<Tensor>& inputs);
    /// Bytes of working memory (the memory plan's arenas) this session holds so far.
    std::size_t arena_bytes() const;

    /// Times each operator of the runs that follow (one clock read per operator), until turned
    /// off. Turning it on clears what profile() holds.
    void set_profiling(bool on);
    /// What the profiled runs measured, per operator in the order they first ran; operators of
    /// the programs for different batch sizes or shapes with the same name are summed.
    std::vector<OpProfile> profile() const;

    struct State;

private:
    friend class Model;
    friend struct Model::Shared;
    explicit Session(std::unique_ptr<State> s);
    std::unique_ptr<State> state_;
};

/// Loads a model file (Keras .h5), or a graft descriptor directory (one holding graph.json,
/// written by `graft convert` or graft::descriptor::write), and prepares it for running.
GRAFT_API Model load(const std::string& path, const LoadOptions& options = {});

/// The IR graph of a model file (Keras, ONNX or a descriptor) as converted, before optimization,
/// with options.limits checked (file size first, then the graph). What load() runs first.
GRAFT_API Graph load_graph(const std::string& path, const LoadOptions& options = {});

}  // namespace graft
