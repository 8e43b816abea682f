// graft/graft.hpp - the one include a host application needs.
//
//   auto model = graft::load("model.h5");
//   auto out = model.run({{"input_1", graft::Tensor({1, 28, 28, 1}, pixels)}});
//   const graft::Tensor& probs = out.at("dense_2");
//
// A Model is immutable after loading and safe to share between threads. Model::run is
// convenient and serializes callers; for concurrent inference give each thread its own
// Session. The batch dimension is free: any batch size runs without reconversion (each new
// size is compiled once, on first use).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graft/error.hpp"
#include "graft/ir/graph.hpp"
#include "graft/registry.hpp"
#include "graft/tensor.hpp"
#include "graft/version.hpp"

namespace graft {

/// The registry with every built-in op, converter and generator (created on first use).
/// Plugins loaded without an explicit registry go here.
Registry& default_registry();

/// A fresh registry holding the built-ins only (tests and hosts that want isolation).
std::unique_ptr<Registry> make_builtin_registry();

struct LoadOptions {
    /// Where handlers come from; null means default_registry(). Must outlive the Model.
    const Registry* registry = nullptr;
    /// For a model.to_json() + save_weights() pair: the weights file (path is the JSON).
    std::string weights_path;
};

class Session;

class Model {
public:
    /// Wraps an IR graph (already converted) for running.
    Model(Graph graph, const Registry& registry);
    ~Model();
    Model(Model&&) noexcept;
    Model& operator=(Model&&) noexcept;

    const Graph& graph() const;
    const Registry& registry() const;

    std::size_t num_inputs() const;
    std::size_t num_outputs() const;
    std::string input_name(std::size_t i) const;
    std::string output_name(std::size_t i) const;
    /// Shapes with the batch as graft::kDynamic (-1).
    Shape input_shape(std::size_t i) const;
    Shape output_shape(std::size_t i) const;

    /// Runs the model. Inputs by name (every input required); outputs by name.
    std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs) const;
    /// Runs with inputs in model order; outputs in model order.
    std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;

    /// A session with its own working memory, for running on several threads at once.
    Session session() const;

    struct Shared;

private:
    std::shared_ptr<Shared> shared_;
};

class Session {
public:
    ~Session();
    Session(Session&&) noexcept;
    Session& operator=(Session&&) noexcept;

    std::vector<Tensor> run(const std::vector<Tensor>& inputs);
    std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs);

    struct State;

private:
    friend class Model;
    friend struct Model::Shared;
    explicit Session(std::unique_ptr<State> s);
    std::unique_ptr<State> state_;
};

/// Loads a model file (Keras .h5) and prepares it for running.
Model load(const std::string& path, const LoadOptions& options = {});

}  // namespace graft
