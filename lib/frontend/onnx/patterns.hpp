// Exporter patterns fused back into the ops they came from, before conversion. Exporters write
// some ops as chains of primitive nodes: PyTorch below opset 17 writes LayerNorm as ReduceMean,
// Sub, Pow, ReduceMean, Add, Sqrt, Div (then Mul and Add for the affine part), GELU as
// Div/Erf/Add/Mul/Mul, SiLU as Sigmoid * x and Hardswish below opset 14 as HardSigmoid * x.
// Converted node by node they run as many ops that each read and write the whole tensor, and the
// optimizer cannot fold an activation into the layer before it. fuse_patterns() finds them and
// replaces each by one node of the op it computes (LayerNormalization, Gelu, Swish, HardSwish),
// which the ordinary converters then handle.
//
// A chain is fused only where the result is the same computation: every inner value has no other
// reader and is not a graph output, every constant has the value the op implies (the exponent 2,
// the 1 and 0.5 of GELU, HardSigmoid's 1/6 and 0.5), and LayerNorm's axes are the trailing ones.
// Anything else is left as it is and converted node by node.
#pragma once

#include <deque>
#include <functional>
#include <vector>

#include "frontend/onnx/model_proto.hpp"

namespace graft::onnx {

struct FusedNodes {
    /// The nodes to convert, in order: the graph's own, except where a chain became one node.
    std::vector<const ::onnx::NodeProto*> nodes;
    /// The nodes made by fusion (nodes points into it).
    std::deque<::onnx::NodeProto> made;
    /// How many chains were fused.
    int fused = 0;
};

/// `initializer(name)` is the value of the initializer `name`, or nullptr.
FusedNodes fuse_patterns(const ModelFile& file, const std::function<const HostTensor*(const std::string&)>& initializer);

}  // namespace graft::onnx
