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

#include <string>

#include "graft/export.hpp"
#include "graft/frontend/check.hpp"
#include "graft/ir/graph.hpp"
#include "graft/registry.hpp"

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

struct Options {};

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
