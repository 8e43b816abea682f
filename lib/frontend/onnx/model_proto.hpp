// Reading an ONNX file: the ModelProto (protobuf's parser with explicit size and recursion
// limits, then ONNX's own checker), the opsets it imports, and tensors (initializers, Constant
// values, tensor attributes) as checked host arrays. Nothing read from the file is used before it
// is checked: sizes against the element type, external data against the model's folder.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "frontend/onnx/host_tensor.hpp"
#include "graft/ir/variable.hpp"

namespace graft::onnx {

/// A parsed, checked model file.
struct ModelFile {
    std::string path;  ///< as given, for messages
    std::string dir;   ///< the folder external data must stay inside
    ::onnx::ModelProto proto;
    /// Opset version by domain ("" is written "ai.onnx").
    std::map<std::string, std::int64_t> opsets;

    /// The opset `domain` is imported at; FormatError naming the node if it is not imported.
    std::int64_t opset(const std::string& domain, const std::string& node) const;
};

/// Reads and checks `path`. IOError if it cannot be read, FormatError if it is not a valid ONNX
/// model (ONNX's checker's message included), UnsupportedError for an ai.onnx opset outside
/// [kMinOpset, kMaxOpset].
std::unique_ptr<ModelFile> read_model(const std::string& path);

/// The values of `t`; errors name `what` ("model.onnx: initializer 'w'") and say what was found
/// and what was expected. Strings, complex types and sparse tensors are UnsupportedError.
HostTensor read_tensor(const ::onnx::TensorProto& t, const ModelFile& file, const std::string& what);

/// The element-type name of an ONNX TensorProto data type ("float32", "int64", ...).
std::string onnx_type_name(int data_type);

}  // namespace graft::onnx
