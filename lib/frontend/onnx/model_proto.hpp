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

/// An integer known while converting up to the batch size N, which a model with a dynamic batch
/// fixes only when it runs: value + batch * N, for any N >= 1. Shape arithmetic on a dynamic
/// batch (Shape -> Gather -> Mul -> Concat -> Reshape) computes with these.
struct SymInt {
    std::int64_t value = 0, batch = 0;

    bool fixed() const noexcept { return batch == 0; }
    bool operator==(const SymInt& o) const noexcept { return value == o.value && batch == o.batch; }
    /// "3", "N", "4*N", "2*N+1".
    std::string str() const;
};

/// A tensor's values as graft keeps them while converting: float types (float, double,
/// float16, bfloat16) as float32, integer types and bool as int64.
struct HostTensor {
    enum class Kind { floating, integer, boolean };
    Kind kind = Kind::floating;
    Shape shape;
    std::vector<float> f;         ///< floating
    std::vector<std::int64_t> i;  ///< integer, boolean (0/1)
    /// Integer tensors: per element, its multiple of the batch size (element k is the SymInt
    /// i[k] + batch[k] * N); empty, or all zero, when every element is a plain number.
    std::vector<std::int64_t> batch;

    std::int64_t numel() const { return graft::numel(shape); }
    bool is_float() const noexcept { return kind == Kind::floating; }
    /// Some element depends on the batch size.
    bool symbolic() const noexcept;
    /// Element k of an integer or boolean tensor.
    SymInt sym(std::size_t k) const { return {i[k], batch.empty() ? 0 : batch[k]}; }
    /// Appends element k of `t` (an integer to a floating tensor as a float; UnsupportedError if
    /// it depends on the batch size).
    void push(const HostTensor& t, std::size_t k);
    /// Appends `v` to an integer tensor.
    void push(SymInt v);
    /// The values as float32 (integers converted); UnsupportedError if they depend on the batch
    /// size (graft computes with such values only as shapes).
    std::vector<float> floats() const;
    /// The values as int64; FormatError naming `what` for floating values that are not integers,
    /// UnsupportedError naming it if they depend on the batch size.
    std::vector<std::int64_t> ints(const std::string& what) const;
    /// The values as SymInts; FormatError naming `what` for floating values that are not integers.
    std::vector<SymInt> sym_ints(const std::string& what) const;
};

/// The values of `t`; errors name `what` ("model.onnx: initializer 'w'") and say what was found
/// and what was expected. Strings, complex types and sparse tensors are UnsupportedError.
HostTensor read_tensor(const ::onnx::TensorProto& t, const ModelFile& file, const std::string& what);

/// The element-type name of an ONNX TensorProto data type ("float32", "int64", ...).
std::string onnx_type_name(int data_type);

}  // namespace graft::onnx
