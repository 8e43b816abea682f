// The layer graph of a Keras model config, normalized across Keras generations: Sequential
// (list or {"layers"}; with or without an InputLayer) and Functional ("Model"/"Functional";
// Keras 1/2 list-style and Keras 3 dict-style inbound nodes).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "graft/ir/variable.hpp"

namespace graft::keras {

/// Output `tensor` of the `node`-th call of layer `layer`.
struct TensorRef {
    std::string layer;
    int node = 0;
    int tensor = 0;
};

struct ModelSpec;

struct LayerSpec {
    std::string name;
    std::string class_name;
    const rapidjson::Value* config = nullptr;       // the layer's "config" object
    std::vector<std::vector<TensorRef>> calls;     // inbound tensors of each call (node)
    /// Each call's keyword arguments as stored (null if none). Keras tensors among them under
    /// 'query', 'value' and 'key' (MultiHeadAttention's call(query, value, key)) and 'initial_state' (a
    /// recurrent layer's or Bidirectional's states) are appended to that call's tensors after
    /// the positional ones, in that order.
    std::vector<const rapidjson::Value*> call_kwargs;
    /// A model used as a layer (class Sequential / Model / Functional): its own layer graph.
    std::shared_ptr<const ModelSpec> nested;
    /// Node index of the first call in references to this layer: 1 for a nested model that
    /// Keras saved with its own internal node first (the references then run past the calls).
    int node_offset = 0;
    /// The layer's "module" (Keras 3; "" if absent): tells QKeras/HGQ classes from Keras' own.
    std::string module{};
    /// Why the layer's inbound nodes could not be read ("" if they could). Kept, not thrown, so
    /// that a layer of a class graft does not know (TFOpLambda's nodes hold call arguments) is
    /// refused by name; for a known class the converter throws it as a FormatError.
    std::string inbound_error{};
};

struct InputSpec {
    std::string name;  // Keras input layer name
    Shape shape;       // with the batch as kDynamic; empty for a nested Sequential without one
    std::string dtype;
};

struct ModelSpec {
    std::string class_name;
    std::vector<InputSpec> inputs;
    std::vector<LayerSpec> layers;  // every non-input layer, in config order
    std::vector<TensorRef> input_refs;   // the tensor each input stands for
    std::vector<TensorRef> outputs;
};

/// Normalizes a model config. `file` names the file in errors.
ModelSpec parse_model_config(const rapidjson::Value& model_config, const std::string& file, const std::string& keras_version);

/// Keras' "ThisName" -> "this_name" (how Keras 1 names an implicit Sequential input).
std::string snake_case(const std::string& class_name);

/// Whether a layer class is a model used as a layer.
bool is_model_class(const std::string& class_name);

}  // namespace graft::keras
