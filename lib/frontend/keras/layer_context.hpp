// The Keras frontend's one LayerContext: one call of a Keras layer, with everything a converter
// handler reads given up front. The converter makes one per layer call (converter.cpp); a wrapper
// makes one for the layer it wraps (layers/wrappers.cpp), in the wrapper's file and graph.
#pragma once

#include <string>
#include <vector>

#include "graft/frontend/layer.hpp"

namespace graft::keras {

class ModelFile;
struct LayerSpec;

class KerasLayerContext final : public LayerContext {
public:
    /// Call `call` of layer `spec` of the model in `file`, with its weights and inputs.
    KerasLayerContext(const ModelFile& file, const LayerSpec& spec, int call, std::vector<WeightArray> weights,
                      std::vector<Value> inputs, Graph& g, const Registry& registry);
    /// The layer wrapped by `outer`: class `class_name` with `config`, named `name`; the file,
    /// graph and registry are the wrapper's. Config errors name the wrapper.
    KerasLayerContext(LayerContext& outer, std::string name, std::string class_name, const Config& config,
                      std::vector<WeightArray> weights, std::vector<Value> inputs);

    const std::string& frontend() const override;
    const std::string& file() const override { return file_; }
    const std::string& layer_name() const override { return name_; }
    const std::string& class_name() const override { return class_name_; }
    const std::string& framework_version() const override { return version_; }
    const std::string& framework_backend() const override { return backend_; }
    const Config& config() const override { return config_; }
    Config call_kwargs() const override { return call_kwargs_; }
    std::size_t num_inputs() const override { return inputs_.size(); }
    const Value& input(std::size_t i) const override;
    void set_outputs(std::vector<Value> outputs) override { outputs_ = std::move(outputs); }
    std::size_t num_weights() const override { return weights_.size(); }
    const WeightArray& weight(std::size_t i) const override;
    Graph& graph() override { return graph_; }
    const Registry& registry() const override { return registry_; }

    /// What the handler set with set_outputs(), moved out; FormatError if it set none.
    std::vector<Value> take_outputs();

private:
    std::string file_, version_, backend_, name_, class_name_;
    Config config_, call_kwargs_;
    std::vector<WeightArray> weights_;
    std::vector<Value> inputs_, outputs_;
    Graph& graph_;
    const Registry& registry_;
};

}  // namespace graft::keras
