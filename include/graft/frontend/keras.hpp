// graft/frontend/keras.hpp - the Keras frontend: .h5 model files to graft IR.
#pragma once

#include <string>
#include <vector>

#include "graft/ir/graph.hpp"
#include "graft/registry.hpp"

namespace graft::keras {

struct Options {
    /// For a model.to_json() file: the save_weights() .h5 that goes with it.
    std::string weights_path;
};

/// A layer the pre-flight check could not place.
struct Finding {
    std::string layer;       ///< layer name
    std::string class_name;  ///< Keras class
    std::string message;     ///< what is wrong and what to do
};

/// Lists every layer of the model that no converter handler in `registry` accepts, all at once,
/// without converting anything. Throws FormatError if the file itself is unreadable.
std::vector<Finding> check(const std::string& path, const Registry& registry, const Options& options = {});

/// Reads a Keras model file and converts it to an IR graph. Runs check() first and throws
/// UnsupportedError listing every finding.
Graph convert(const std::string& path, const Registry& registry, const Options& options = {});

}  // namespace graft::keras
