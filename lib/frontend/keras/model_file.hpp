// A Keras model on disk: the model config (JSON) and lazy access to each layer's weights.
// Reads full-model .h5 files (Keras 1, 2, tf.keras, Keras 3 legacy), Keras 3 native .keras
// archives, and model.to_json() + save_weights() pairs.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "frontend/keras/h5_file.hpp"
#include "graft/frontend/layer.hpp"
#include "graft/ir/graph.hpp"
#include "graft/registry.hpp"
#include "graft/limits.hpp"

namespace graft::keras {

class ModelFile {
public:
    /// `path` is a full-model .h5 or .keras, or a model.to_json() file when `weights_path` is given.
    /// Every weight's declared shape is checked against `limits` (elements per tensor, total
    /// bytes) before any is decoded; HDF5 is read per `box` (in the sandboxed helper by default;
    /// graft/hdf5_containment.hpp).
    ModelFile(const std::string& path, const std::string& weights_path, const Limits& limits = {}, const Hdf5Containment& box = {});
    /// A model.to_json() config held in memory (`path` names it in messages) with its weights given
    /// by layer name, as a .keras archive's are read: no file is opened. The weights' shapes are
    /// checked against `limits` like a file's. For the config fuzz target (tests/fuzz/).
    ModelFile(const std::string& path, const std::string& config_json, std::map<std::string, std::vector<WeightArray>> weights,
              const Limits& limits);
    ~ModelFile();
    ModelFile(const ModelFile&) = delete;
    ModelFile& operator=(const ModelFile&) = delete;

    const std::string& path() const noexcept { return path_; }
    const std::string& keras_version() const noexcept { return keras_version_; }
    const std::string& backend() const noexcept { return backend_; }
    /// {"class_name": ..., "config": ...}
    const rapidjson::Value& model_config() const { return doc_; }

    /// The weights of one layer, in the order of its weight_names; empty if it has none.
    /// FormatError if a listed dataset is missing or unreadable.
    std::vector<WeightArray> layer_weights(const std::string& layer) const;
    /// Whether the file lists this layer at all.
    bool has_layer(const std::string& layer) const;

private:
    void check_declared_weights() const;

    Limits limits_;
    std::string path_, weights_file_, keras_version_, backend_;
    rapidjson::Document doc_;
    std::unique_ptr<h5::File> weights_;  // the file holding layer_names and the layer groups
    std::string weights_root_;           // "/model_weights" or "/"
    std::vector<std::string> layer_names_;
    // .keras: weights by layer name, found at layers/<snake_case class>[_N]/... (see keras_zip.hpp);
    // also a config held in memory with its weights
    bool keras_archive_ = false;
    std::map<std::string, std::vector<WeightArray>> archive_weights_;
    Hdf5Containment box_;
    void open_keras_archive(const std::string& path);
};

/// Converts the model of `file` to an IR graph, as keras::convert does for a file's path.
Graph convert_model_file(const ModelFile& file, const Registry& registry);

}  // namespace graft::keras
