// tools/graft/convert.cpp - `graft convert`: the optimized model as a graft descriptor
// (OUT/graph.json + OUT/weights.bin, see graft/backend/descriptor.hpp), written atomically.
#include <string>

#include "commands.hpp"
#include "graft/backend/descriptor.hpp"
#include "graft/frontend/keras.hpp"
#include "graft/graft.hpp"
#include "graft/optimize/passes.hpp"

namespace graft::cli {

Graph convert_model(const ModelOptions& o) {
    if (descriptor::is_descriptor(o.path)) return descriptor::read(o.path, default_registry());
    keras::Options options;
    options.weights_path = o.weights;
    return keras::convert(o.path, default_registry(), options);
}

void convert(const ConvertOptions& o) {
    Graph graph = convert_model(o.model);
    graph.validate();
    optimize::pipeline_for(o.model.opt_level, "graft").run(graph, default_registry());
    descriptor::write(graph, default_registry(), o.out);
}

}  // namespace graft::cli
