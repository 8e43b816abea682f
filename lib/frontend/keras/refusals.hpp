// What the pre-flight check says about a Keras layer whose class graft has no handler for:
// TensorFlow ops recorded as layers (TFOpLambda, SlicingOpLambda, TensorFlowOpLayer),
// quantization layers (QKeras, HGQ), Lambda, and any other class (a custom layer).
#pragma once

#include <string>

namespace graft::keras {

struct LayerSpec;

/// Why `layer` (whose class has no converter handler) is refused and what to do about it. Every
/// message names the plugin mechanism (--plugin PATH or GRAFT_PLUGIN_PATH) as a way out.
std::string unknown_class_advice(const LayerSpec& layer);

/// The same for a class named only by name (a wrapped layer).
std::string unknown_class_advice(const std::string& class_name);

}  // namespace graft::keras
