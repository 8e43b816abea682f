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
//
// PyTorch's nn.MultiheadAttention (self-attention, one in_proj for q, k and v, as torch 1.x
// exports it) becomes graft.fused:PackedSelfAttention (ops/attention.cpp): three Slices of the
// projection, Reshapes to heads, Transposes, the scaling, MatMul, Softmax, MatMul, and the
// Transpose and Reshape back. Its sizes are computed by shape arithmetic the pattern cannot read,
// so that node's converter checks them and may decline: the converter then converts the nodes
// the fusion took out (`fallback`), as if nothing had been fused. Nodes of the chain whose
// values something else reads (torch's Shape of each Slice) stay in the graph; what of them
// nothing reads after fusion the optimizer drops.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <vector>

#include "frontend/onnx/model_proto.hpp"

namespace graft::onnx {

/// The domain of the nodes only fusion makes (graft's own, imported by no model).
inline constexpr const char* kFusedDomain = "graft.fused";

struct FusedNodes {
    /// The nodes to convert, in order: the graph's own, except where a chain became one node.
    std::vector<const ::onnx::NodeProto*> nodes;
    /// The nodes made by fusion (nodes points into it).
    std::deque<::onnx::NodeProto> made;
    /// How many chains were fused.
    int fused = 0;
    /// For a made node whose converter may decline: the nodes it replaced, in graph order.
    std::map<const ::onnx::NodeProto*, std::vector<const ::onnx::NodeProto*>> fallback;
};

/// `initializer(name)` is the value of the initializer `name`, or nullptr.
FusedNodes fuse_patterns(const ModelFile& file, const std::function<const HostTensor*(const std::string&)>& initializer);

}  // namespace graft::onnx
