// KerasLayerContext (layer_context.hpp).
#include "frontend/keras/layer_context.hpp"

#include <utility>

#include "frontend/keras/json_config.hpp"
#include "frontend/keras/model_config.hpp"
#include "frontend/keras/model_file.hpp"

namespace graft::keras {

KerasLayerContext::KerasLayerContext(const ModelFile& file, const LayerSpec& spec, int call,
                                     std::vector<WeightArray> weights, std::vector<Value> inputs, Graph& g,
                                     const Registry& registry)
    : file_(file.path()), version_(file.keras_version()), backend_(file.backend()), name_(spec.name),
      class_name_(spec.class_name), weights_(std::move(weights)), inputs_(std::move(inputs)), graph_(g),
      registry_(registry) {
    config_ = json_config(spec.config, where());
    const auto c = static_cast<std::size_t>(call);
    call_kwargs_ = json_config(c < spec.call_kwargs.size() ? spec.call_kwargs[c] : nullptr, where());
}

KerasLayerContext::KerasLayerContext(LayerContext& outer, std::string name, std::string class_name,
                                     const Config& config, std::vector<WeightArray> weights,
                                     std::vector<Value> inputs)
    : file_(outer.file()), version_(outer.framework_version()), backend_(outer.framework_backend()),
      name_(std::move(name)), class_name_(std::move(class_name)),
      config_(config.source(), config.node(), outer.where() + ", wrapped layer (" + class_name_ + ")"),
      call_kwargs_(nullptr, nullptr, where()), weights_(std::move(weights)), inputs_(std::move(inputs)),
      graph_(outer.graph()), registry_(outer.registry()) {}

const std::string& KerasLayerContext::frontend() const {
    static const std::string keras = "keras";
    return keras;
}

const Value& KerasLayerContext::input(std::size_t i) const {
    if (i >= inputs_.size()) fail_format("asks for input " + std::to_string(i) + " of " + std::to_string(inputs_.size()));
    return inputs_[i];
}

const WeightArray& KerasLayerContext::weight(std::size_t i) const {
    if (i >= weights_.size()) fail_format("asks for weight " + std::to_string(i) + " of " + std::to_string(weights_.size()));
    return weights_[i];
}

std::vector<Value> KerasLayerContext::take_outputs() {
    if (outputs_.empty()) fail_format("the converter handler produced no outputs");
    return std::move(outputs_);
}

}  // namespace graft::keras
