// graft/frontend/onnx.hpp - the ONNX frontend: .onnx model files to graft IR.
//
// Every node is handed to the converter registered for ("onnx", onnx::converter_key(domain,
// op_type)); the handler sees the node through a LayerContext (graft/frontend/layer.hpp): its
// attributes as config(), its inputs as Values (constants, initializers included, as constant
// variables), and the opset its domain is imported at as opset(). A plugin registers converters for
// a custom domain the same way:
//
//   reg.add_converter("onnx", graft::onnx::converter_key("com.example", "MyOp"), handler);
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graft/error.hpp"
#include "graft/export.hpp"
#include "graft/frontend/check.hpp"
#include "graft/ir/graph.hpp"
#include "graft/registry.hpp"
#include "graft/tensor.hpp"

namespace graft::onnx {

/// The frontend name converters are registered under.
inline constexpr const char* kFrontend = "onnx";
/// The default domain, as ONNX files spell it ("") and as graft names it.
inline constexpr const char* kDefaultDomain = "ai.onnx";
/// The ai.onnx opsets graft reads; newer ones are refused until their changes are reviewed.
/// Converters check the version where an op's meaning changed (Reshape-1's attribute, the legacy
/// broadcast attribute before opset 7, Softmax's 2-D coercion before 13, ...) and refuse what they
/// do not implement, by name.
inline constexpr int kMinOpset = 1;
inline constexpr int kMaxOpset = 17;

/// The registry key of an ONNX op: "Conv" for the default domain ("" or "ai.onnx"), else
/// "com.example:MyOp".
inline std::string converter_key(const std::string& domain, const std::string& op_type) {
    return domain.empty() || domain == kDefaultDomain ? op_type : domain + ":" + op_type;
}

struct Options {
    /// Values of model inputs, by name, that converters may read as if they were constants (the
    /// shape of a Reshape, the axes of a ReduceSum given as inputs). The inputs stay inputs of the
    /// graph. The shape of each must be the declared one.
    std::map<std::string, Tensor> input_values;
};

/// What convert() throws when all that stops a model is that some nodes need the values of
/// model inputs while converting (value_inputs): convert again with those values in
/// Options::input_values. graft::load does so per distinct value when the model runs.
class InputValuesNeeded : public UnsupportedError {
public:
    using Convert = std::function<Graph(const std::map<std::string, Tensor>& values)>;
    InputValuesNeeded(const std::string& what, std::vector<std::string> value_inputs, std::shared_ptr<const Graph> signature,
                      Convert convert)
        : UnsupportedError(what), value_inputs_(std::move(value_inputs)), signature_(std::move(signature)), convert_(std::move(convert)) {}
    /// The inputs, in model order.
    const std::vector<std::string>& value_inputs() const noexcept { return value_inputs_; }
    /// The model's inputs and outputs as it declares them (no operators): names, dtypes, shapes
    /// (kDynamic for the batch and for sizes the file leaves open; an output of unknown rank has
    /// an empty shape).
    const std::shared_ptr<const Graph>& signature() const noexcept { return signature_; }
    /// Converts the model (as read already: the file is not read again, external data aside) for
    /// these values of the value inputs; the registry must still live.
    const Convert& convert() const noexcept { return convert_; }

private:
    std::vector<std::string> value_inputs_;
    std::shared_ptr<const Graph> signature_;
    Convert convert_;
};

/// Whether `path` looks like an ONNX model (its name ends in .onnx).
GRAFT_API bool is_onnx_path(const std::string& path);

/// The pre-flight check: runs the whole conversion, collecting every node whose op has no
/// converter (with its domain and opset) and every UnsupportedError a converter raises, instead
/// of stopping at the first. Throws FormatError/IOError when the file itself is broken.
GRAFT_API CheckReport check_model(const std::string& path, const Registry& registry, const Options& options = {});

/// Reads an ONNX model and converts it to an IR graph. Runs the same check and throws one
/// UnsupportedError listing every finding.
GRAFT_API Graph convert(const std::string& path, const Registry& registry, const Options& options = {});

}  // namespace graft::onnx
