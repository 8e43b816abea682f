// graft::load and graft::load_graph: a model file or descriptor directory to a Model, through
// the frontend that reads it. Host only: the browser runtime (web/) reads descriptors from memory.
#include <optional>

#include "graft/backend/descriptor.hpp"
#include "graft/frontend/keras.hpp"
#include "graft/frontend/onnx.hpp"
#include "graft/graft.hpp"
#include "limits_check.hpp"

namespace graft {

Graph load_graph(const std::string& path, const LoadOptions& options) {
    const Registry& reg = options.registry ? *options.registry : default_registry();
    check_file_size(path, options.limits);
    if (!options.weights_path.empty()) check_file_size(options.weights_path, options.limits);
    Graph g;
    if (descriptor::is_descriptor(path)) {
        g = descriptor::read(path, reg);
    } else if (onnx::is_onnx_path(path)) {
        g = onnx::convert(path, reg);
    } else {
        keras::Options ko;
        ko.weights_path = options.weights_path;
        ko.limits = options.limits;
        ko.hdf5 = options.hdf5;
        g = keras::convert(path, reg, ko);
    }
    check_graph_limits(g, options.limits, path);
    return g;
}

Model load(const std::string& path, const LoadOptions& options) {
    const Registry& reg = options.registry ? *options.registry : default_registry();
    std::optional<Model> model;
    try {
        model.emplace(load_graph(path, options), reg, options.opt_level, options.precision);
    } catch (const onnx::InputValuesNeeded& e) {  // converted per value of those inputs, when it runs
        ValueSpecialisedGraph source;
        source.signature = e.signature()->clone();
        source.value_inputs = e.value_inputs();
        source.convert = [convert = e.convert(), path, limits = options.limits](const std::map<std::string, Tensor>& values) {
            Graph g = convert(values);
            check_graph_limits(g, limits, path);
            return g;
        };
        model.emplace(std::move(source), reg, options.opt_level, options.precision);
    }
    model->set_threads(options.threads);
    model->set_batch_slice(options.batch_slice);
    model->set_huge_pages(options.huge_pages);
    return std::move(*model);
}

}  // namespace graft
