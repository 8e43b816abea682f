// graft/frontend/check.hpp - what a frontend's pre-flight check reports (every frontend alike).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace graft {

/// A layer (Keras) or node (ONNX) the pre-flight check could not place.
struct Finding {
    std::string layer;       ///< layer or node name
    std::string class_name;  ///< Keras class, or ONNX "op_type" ("domain:op_type" outside ai.onnx) and opset
    std::string message;     ///< what is wrong and what to do
    /// ONNX: the model inputs whose values the node needs while converting (a shape, axes or pads
    /// given as an input), when that is all that stops it; empty otherwise.
    std::vector<std::string> value_inputs;
};

/// What the pre-flight check found.
struct CheckReport {
    /// Every layer or node (or option of one) that cannot be converted, all at once. Layer names
    /// of nested Keras models are qualified: "sequential_1/dense_2".
    std::vector<Finding> findings;
    /// Layers or nodes that could not be checked because an input comes from a refused one.
    std::vector<std::string> unchecked;
    /// Layers or nodes looked at (nested model layers included; a wrapper counts once).
    std::size_t layers = 0;
    /// Every finding's value_inputs, each name once: graft::load compiles such a model per value
    /// of these inputs when nothing else stops it (graft/graft.hpp, Model::value_inputs).
    std::vector<std::string> value_inputs;
};

}  // namespace graft
