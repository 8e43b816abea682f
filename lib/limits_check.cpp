#include "limits_check.hpp"

#include <filesystem>
#include <system_error>

#include "graft/error.hpp"
#include "graft/printable.hpp"

namespace graft {

void check_file_size(const std::string& path, const Limits& limits) {
    std::error_code ec;
    const std::filesystem::path p(path);
    if (!std::filesystem::is_regular_file(p, ec)) return;
    const auto size = std::filesystem::file_size(p, ec);
    if (!ec && size > limits.max_file_bytes)
        throw FormatError(path + ": the file has " + std::to_string(size) + " bytes, more than the limit of " +
                          checked::limit_str(static_cast<std::int64_t>(limits.max_file_bytes)) +
                          " (LoadOptions::limits.max_file_bytes)");
}

void check_graph_limits(const Graph& g, const Limits& limits, const std::string& path) {
    if (g.operators().size() > limits.max_graph_nodes)
        throw FormatError(path + ": the model has " + std::to_string(g.operators().size()) + " operators, more than the limit of " +
                          std::to_string(limits.max_graph_nodes) + " (LoadOptions::limits.max_graph_nodes)");
    std::uint64_t weight_bytes = 0;
    for (const auto& v : g.variables()) {
        if (!checked::fits(v->shape(), limits.max_tensor_elements))
            checked::static_elements(path + ": variable '" + printable(v->name()) + "'", "shape", v->shape(), limits.max_tensor_elements);
        if (v->is_constant()) weight_bytes += static_cast<std::uint64_t>(v->numel()) * sizeof(float);
    }
    if (weight_bytes > limits.max_total_weight_bytes)
        throw FormatError(path + ": the model's weights take " + std::to_string(weight_bytes) + " bytes, more than the limit of " +
                          checked::limit_str(static_cast<std::int64_t>(limits.max_total_weight_bytes)) +
                          " (LoadOptions::limits.max_total_weight_bytes)");
}

}  // namespace graft
